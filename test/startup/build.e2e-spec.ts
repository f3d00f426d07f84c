import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

/**
 * scripts/build.mjs (behind `npm start`, `npm run admin` and `npm run build`) on a small project of its own,
 * so that the suite's dist/ is never rebuilt under the running tests.
 */
describe('the build script', () => {
  let project: string;

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'ids-build-'));
    mkdirSync(join(project, 'scripts'));
    writeFileSync(join(project, 'scripts', 'build.mjs'), readFileSync(join(process.cwd(), 'scripts', 'build.mjs')));
    symlinkSync(join(process.cwd(), 'node_modules'), join(project, 'node_modules'));
    writeFileSync(join(project, 'package.json'), '{"type":"module"}');
    // The libraries as the service's own tsconfig.json has them: with the default ones (the DOM's among them),
    // checked, each of the test's compiles took 4.5 s of CPU instead of under one.
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', target: 'ES2023', lib: ['ES2023'], skipLibCheck: true, strict: true, types: [] } }),
    );
    writeFileSync(
      join(project, 'tsconfig.build.json'),
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { rootDir: 'src', outDir: 'dist' }, include: ['src'] }),
    );
    mkdirSync(join(project, 'src', 'nested'), { recursive: true });
    writeFileSync(join(project, 'src', 'main.ts'), 'export const a: number = 1;\n');
    writeFileSync(join(project, 'src', 'nested', 'b.ts'), 'export const b: number = 2;\n');
  });

  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const ifStale = () => spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: project, encoding: 'utf8' });
  const built = (path: string) => join(project, 'dist', path);

  // Each build runs the compiler (seconds): the steps share builds where they can.
  it('builds when dist/ is missing, then only when a source changes, is added or is deleted; a failed build is retried', () => {
    let run = ifStale();
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('dist/ is not built from the current src/');
    expect(readFileSync(built('nested/b.js'), 'utf8')).toContain('b = 2');
    const firstBuild = statSync(built('main.js')).mtimeMs;

    run = ifStale();
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(statSync(built('main.js')).mtimeMs).toBe(firstBuild);

    writeFileSync(join(project, 'src', 'nested', 'b.ts'), 'export const b: number = 3;\n');
    writeFileSync(join(project, 'src', 'c.ts'), 'export const c = 4;\n');
    expect(ifStale().stderr).toContain('not built from the current src/');
    expect(readFileSync(built('nested/b.js'), 'utf8')).toContain('b = 3');
    expect(existsSync(built('c.js'))).toBe(true);

    // A clean build: the output of a deleted source does not survive. A compile error exits 1 and leaves
    // dist/ marked stale, so the next start builds again.
    unlinkSync(join(project, 'src', 'c.ts'));
    writeFileSync(join(project, 'src', 'main.ts'), 'export const a: number = "one";\n');
    const failed = ifStale();
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('build failed');
    expect(existsSync(built('c.js'))).toBe(false);

    writeFileSync(join(project, 'src', 'main.ts'), 'export const a: number = 1;\n');
    run = ifStale();
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('not built from the current src/');
    expect(ifStale().stderr).toBe('');
  });
});
