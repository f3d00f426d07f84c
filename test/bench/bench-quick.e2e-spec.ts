// `npm run bench -- --quick` must keep working: this runs the quick mode as a child process (against the
// service build in dist/, which `npm test` has just made, and the bench's own embedded cluster with
// pg_stat_statements) and checks that every row of the suite ran and reported. On that cluster the bench's
// parity check runs too: the raw baselines load the service's statements and parameter builders from the
// build (bench/rows/service-statements.ts), and one that runs a statement the service did not (a builder or
// module that drifted) fails its row, and so this test; so does a build whose statement modules the bench
// cannot load, or whose batch statement no longer seeds (bench/rows/seed.ts). It asserts nothing about timings: those belong to
// the full `npm run bench` on a quiet machine (BENCHMARKS.md).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

const run = promisify(execFile);
// Jest runs from the repository root (its config sits there).
const repoRoot = resolve(process.cwd());

/** Every row of the table; 3 and 7 have two phases each. */
/** The service build under test: dist/ (what `npm test` just built), or BENCH_SERVICE_DIR. */
const serviceDir = resolve(process.env.BENCH_SERVICE_DIR ?? join(repoRoot, 'dist'));

const ROW_IDS = [
  '1',
  '2',
  '2f',
  '3a',
  '3af',
  '3b',
  '3bf',
  '3c',
  '3cf',
  '3d',
  '4',
  '5',
  '6',
  '6f',
  '7a',
  '7af',
  '7b',
  '7bf',
  '8',
  '9',
  '10',
  '11',
  '12',
  '13',
  '14',
  '15',
  '16',
  '17',
  '18',
  '19a',
  '19b',
  '20',
  '20b',
  '20c',
  '21a',
  '21b',
  '22a',
  '22b',
  '23',
  '24a',
  '24b',
  '24c',
  '24d',
  '25a',
  '25b',
  '25c',
  '25d',
];

interface Side {
  label: string;
  throughput: number;
  p50Ms?: number;
  p99Ms?: number;
  memory?: { peakRssMiB: number };
}
interface Row {
  id: string;
  status: string;
  reason?: string;
  unit: string;
  service?: Side;
  baseline?: Side;
  ratio?: number;
  sql?: { baselineOnly: string[] };
}

describe('npm run bench -- --quick', () => {
  // Bench build output stays inside the repository so that its imports resolve from node_modules.
  const buildDir = join(repoRoot, 'bench', '.build', `jest-${process.pid}-${randomBytes(3).toString('hex')}`);
  let workDir: string;

  beforeAll(async () => {
    if (!existsSync(join(repoRoot, 'bench', 'tsconfig.json'))) throw new Error(`run jest from the repository root, not ${repoRoot}`);
    workDir = await mkdtemp(join(tmpdir(), 'ids-bench-test-'));
    // Emit only: `npm test` type-checks bench/ before Jest (tsconfig.json includes it); checking it again here
    // cost a third of this compile.
    await run(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'bench/tsconfig.json', '--noCheck', '--outDir', buildDir], {
      cwd: repoRoot,
    });
  }, 120_000);

  afterAll(async () => {
    await rm(buildDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  });

  it('runs every row and writes each one to its JSON output', async () => {
    const out = join(workDir, 'results.json');
    let stdout = '';
    let stderr = '';
    try {
      ({ stdout, stderr } = await run(process.execPath, [join(buildDir, 'run.js'), '--quick', '--service-dir', serviceDir, '--out', out], {
        cwd: repoRoot,
        // No DATABASE_URL: the bench starts its own cluster, where statement statistics (and parity) work.
        env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'DATABASE_URL')),
        maxBuffer: 16 * 1024 * 1024,
        timeout: 420_000,
      }));
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`the quick bench failed: ${failed.message}\n${failed.stdout ?? ''}\n${(failed.stderr ?? '').slice(-4000)}`);
    }

    const report = JSON.parse(await readFile(out, 'utf8')) as { meta: { mode: string }; rows: Row[] };
    expect(report.meta.mode).toBe('quick');
    expect(report.rows.map((row) => row.id)).toEqual(ROW_IDS);
    for (const row of report.rows) {
      // A row that did not run says why; show that instead of a bare mismatch.
      expect({ id: row.id, status: row.status, reason: row.reason }).toEqual({ id: row.id, status: 'ok', reason: undefined });
      for (const side of [row.service, row.baseline]) {
        expect(side).toBeDefined();
        expect(typeof side!.label).toBe('string');
        expect(Number.isFinite(side!.throughput)).toBe(true);
        // Row 20's sides are one source run each: a time, no spread of latencies.
        const latencies = row.id.startsWith('20') ? 'undefined' : 'number';
        // With the row and side named: a side without latencies had no request finish in its phases.
        const named = { id: row.id, side: side!.label };
        expect({ ...named, p50Ms: typeof side!.p50Ms, p99Ms: typeof side!.p99Ms }).toEqual({ ...named, p50Ms: latencies, p99Ms: latencies });
      }
      // 20b and 20c are timings of later runs against row 20's first run, which measures the memory.
      expect(typeof row.service!.memory?.peakRssMiB).toBe(['20b', '20c'].includes(row.id) ? 'undefined' : 'number');
      expect(Number.isFinite(row.ratio)).toBe(true);
    }
    // The statement statistics were there, so the parity check of the raw baselines ran (row 3a's among them).
    expect(report.rows.find((row) => row.id === '3a')?.sql?.baselineOnly).toEqual([]);
    // The table went to stdout, the progress log to stderr.
    expect(stdout).toContain('Svc peak RSS');
    expect(stderr).toContain('quick run');
  }, 480_000);
});
