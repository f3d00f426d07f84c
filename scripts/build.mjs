// Builds dist/ from src/ with the TypeScript compiler. `--if-stale` builds only when dist/ was not built from
// the current sources, so that `npm start` and `npm run admin` cost no compile when nothing changed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
/** Written last by a successful build: the digest of the sources it was built from. */
const stampFile = join(dist, '.source-digest');

/** A digest of every file under src/ (names and contents, so deletions and branch switches count) and the tsconfigs. */
function sourceDigest() {
  const hash = createHash('sha256');
  const files = readdirSync(join(root, 'src'), { recursive: true })
    .map((name) => join('src', String(name)))
    .filter((path) => statSync(join(root, path)).isFile());
  for (const path of [...files.sort(), 'tsconfig.json', 'tsconfig.build.json']) {
    hash
      .update(`${path}\0`)
      .update(readFileSync(join(root, path)))
      .update('\0');
  }
  return hash.digest('hex');
}

function builtDigest() {
  try {
    return readFileSync(stampFile, 'utf8');
  } catch {
    return undefined;
  }
}

/** A clean build: stale output of deleted sources must not survive. Compiler output goes to stderr. */
export function build(reason = 'building') {
  const digest = sourceDigest();
  process.stderr.write(`${reason}: tsc -p tsconfig.build.json\n`);
  rmSync(dist, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 2, 2] });
  } catch {
    process.stderr.write('build failed (see the compiler errors above)\n');
    process.exit(1);
  }
  writeFileSync(stampFile, digest);
}

export function buildIfStale() {
  if (builtDigest() !== sourceDigest()) build('dist/ is not built from the current src/');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--if-stale')) buildIfStale();
  else build();
}
