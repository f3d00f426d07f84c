import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import semver from 'semver';
import { createTestApp, type TestApp } from '../support/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOCUMENTS = ['README.md', 'CONTRIBUTING.md', 'BENCHMARKS.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)];

/** The body of the section under `## <heading>`, up to the next `## ` heading. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section "## ${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

describe('README and docs stand alone', () => {
  it('link only to files of the repository that exist (nothing outside it, no ../shared)', () => {
    const broken: string[] = [];
    for (const document of DOCUMENTS) {
      const text = read(document);
      if (/\.\.\/shared|\/work\/shared|wire-contract|interface-spec|decisions(\.md| §)|(?<!docs\/)extensions(\.md| §)/.test(text))
        broken.push(`${document}: names the specs`);
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:)/.test(target)) {
          broken.push(`${document}: external link ${target}`);
          continue;
        }
        const path = target.split('#')[0];
        if (path && !existsSync(resolve(ROOT, dirname(document), path))) broken.push(`${document}: ${target} does not exist`);
        if (path && !resolve(ROOT, dirname(document), path).startsWith(ROOT)) broken.push(`${document}: ${target} leaves the repository`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("list every docs/ file in the README's Documentation section", () => {
    const index = section(read('README.md'), 'Documentation');
    const unlisted = DOCUMENTS.filter((d) => d.startsWith('docs/')).filter((d) => !index.includes(`](${d})`));
    expect(unlisted).toEqual([]);
  });
});

describe('the supported Node.js lines', () => {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
  const lines = pkg.engines.node.split('||').map((range) => semver.minVersion(range.trim())!);

  it('are the ones every dependency accepts, from the first version engines names on each line', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } }> };
    const refused = lines.flatMap((version) =>
      Object.entries(lock.packages)
        .filter(([, p]) => p.engines?.node && !semver.satisfies(version, p.engines.node))
        .map(([name, p]) => `${name} (${p.engines!.node}) refuses ${version.version}`),
    );
    expect(refused).toEqual([]);
  });

  it('are the same in engines, the README, CI and the container image', () => {
    const majors = lines.map((version) => version.major);
    const named = lines.map((v) => (v.minor ? `${v.major} (${v.major}.${v.minor} or later)` : `${v.major}`));
    expect(section(read('README.md'), 'Quick start')).toContain(`Node.js ${named.slice(0, -1).join(', ')} or ${named.at(-1)}:`);
    expect(/for line in ([\d ]+); do/.exec(read('.ci/run'))?.[1]).toBe(majors.join(' '));
    expect(read('Dockerfile')).toContain(`lines are ${majors.slice(0, -1).join(', ')} and ${majors.at(-1)}`);
  });
});

describe("README: the quick start's curl block runs as written", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers the resources and an empty lookup, given the address and the printed key', async () => {
    const blocks = [...section(read('README.md'), 'Quick start').matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toHaveLength(2);
    const exports = blocks[1].split('\n').filter((line) => /^\s*export (BASE|KEY)=/.test(line));
    expect(exports).toHaveLength(2);
    const dir = await mkdtemp(join(tmpdir(), 'ids-quick-'));
    const script = join(dir, 'quick.sh');
    await writeFile(
      script,
      `set -euo pipefail\n${blocks[1]
        .split('\n')
        .filter((line) => !exports.includes(line))
        .join('\n')}`,
    );
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile('bash', [script], { timeout: 60_000, env: { PATH: process.env.PATH, BASE: t.url, KEY: t.adminKey } }, (error, stdout, stderr) =>
        done({ code: error ? ((error.code as number | undefined) ?? null) : 0, stdout, stderr }),
      );
    });
    await rm(dir, { recursive: true, force: true });
    expect(result).toEqual(expect.objectContaining({ code: 0, stderr: '' }));
    // curl prints each answer as it came, without a newline between them
    const [resources, lookup] = JSON.parse(`[${result.stdout.trim().replace(/\]\s*\[/g, '],[')}]`);
    expect(resources.map((r: { name: string }) => r.name)).toEqual(['auth', 'intel', 'insight', 'filebox']);
    expect(lookup).toEqual([{ key: { type: 'IPAddress', value: '192.0.2.1' }, matches: [], warnings: [] }]);
  });
});

describe('README: "A tour" runs as written', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await createTestApp();
    dir = await mkdtemp(join(tmpdir(), 'ids-tour-'));
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('has one bash block, which exits 0 against a fresh instance with only BASE and KEY set', async () => {
    const blocks = [...section(read('README.md'), 'A tour').matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toHaveLength(1);
    const script = join(dir, 'tour.sh');
    await writeFile(script, blocks[0]);
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile('bash', [script], { cwd: dir, timeout: 120_000, env: { PATH: process.env.PATH, BASE: t.url, KEY: t.adminKey } }, (error, stdout, stderr) =>
        done({ code: error ? ((error.code as number | undefined) ?? null) : 0, stdout, stderr }),
      );
    });
    expect(result).toEqual(expect.objectContaining({ code: 0, stderr: '' }));
    expect(result.stdout.trim().split('\n').at(-1)).toBe('tour complete');
  });
});
