import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
      if (/\.\.\/shared|\/work\/shared|wire-contract|interface-spec|decisions(\.md| §)|(?<!docs\/)extensions(\.md| §)/.test(text)) broken.push(`${document}: names the specs`);
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

  it('list every docs/ file in the README\'s Documentation section', () => {
    const index = section(read('README.md'), 'Documentation');
    const unlisted = DOCUMENTS.filter((d) => d.startsWith('docs/')).filter((d) => !index.includes(`](${d})`));
    expect(unlisted).toEqual([]);
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
      execFile(
        'bash',
        [script],
        { cwd: dir, timeout: 120_000, env: { PATH: process.env.PATH, BASE: t.url, KEY: t.adminKey } },
        (error, stdout, stderr) => done({ code: error ? ((error.code as number | undefined) ?? null) : 0, stdout, stderr }),
      );
    });
    expect(result).toEqual(expect.objectContaining({ code: 0, stderr: '' }));
    expect(result.stdout.trim().split('\n').at(-1)).toBe('tour complete');
  });
});
