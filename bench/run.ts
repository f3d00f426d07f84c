/**
 * `npm run bench`: starts the built service against a real PostgreSQL, loads each hot path side by side
 * with a baseline measured in the same invocation on the same machine, prints a table and writes
 * bench/results.json. Ratios (service ÷ baseline) are what hold on noisy machines; see BENCHMARKS.md.
 *
 *   node bench/.build/run.js [--quick] [--rows 1,2,9] [--service-dir dist] [--out bench/results.json]
 *                            [--markdown] [--keep] [--profile] [--service-node-args "--trace-gc …"]
 *                            [--storage local|s3] [--floor nest|express]
 *                            [--service-env "LOG_LEVEL=silent METRICS_PORT=0"]
 *   node bench/.build/run.js --scale [--sizes 10k,100k,1M,10M]   (how cost grows with data: bench/scale.ts)
 *
 * `--storage s3` starts an S3-compatible server (s3rver) in its own process, runs the service with
 * FILEBOX_STORAGE on it, and gives rows 7 and 8 raw @aws-sdk/client-s3 baselines on the same server.
 *
 * DATABASE_URL (optional) must name a throwaway database: the bench seeds data into it. Without it the
 * bench starts an embedded PostgreSQL (the service build's own dist/database/embedded-postgres.js) and
 * hands its URL to the service, so the service and the raw `pg` baselines use the same cluster.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { Api } from './lib/api.js';
import { baselineFilesDir, startBaselineServer, startFloorServer, startS3Server, type FloorKind } from './lib/baseline.js';
import { ClusterCpu } from './lib/cpu.js';
import { poolFor, provideDatabase, type BenchDatabase } from './lib/database.js';
import type { ChildServer } from './lib/processes.js';
import { summariseProfiles } from './lib/profile.js';
import { cpuPerUnitTable, markdownTable, sqlPerRequest, textTable } from './lib/report.js';
import { failedRow, MeasurementError, skippedRow, type RowContext, type RowModule, type RowResult } from './lib/row.js';
import { BenchS3 } from './lib/s3.js';
import { FULL, QUICK } from './lib/scale.js';
import { startService, type ServiceHandle } from './lib/service.js';
import { SqlStats } from './lib/sql-stats.js';
import { ALL_ROWS } from './rows/index.js';
import { loadServiceStatements, SERVICE_SETTINGS } from './rows/service-statements.js';
import { runScale } from './scale.js';

const benchDir = dirname(fileURLToPath(import.meta.url));

interface Options {
  quick: boolean;
  rows?: Set<string>;
  serviceDir: string;
  out: string;
  markdown: boolean;
  keep: boolean;
  /** Run the service under `--cpu-prof` and summarise the profile after the run. */
  profile: boolean;
  /** Extra Node flags for the service process (e.g. `--trace-gc`; its output goes to service.log). */
  serviceNodeArgs: string[];
  /** The scale mode instead of the rows (bench/scale.ts), at these sizes. */
  scale: boolean;
  sizes?: string;
  storage: 'local' | 's3';
  /** What the stack floor of rows 2f, 3bf and 6f runs on (bench/floor/): NestJS over Express, the service's stack, or bare Express. */
  floor: FloorKind;
  /** Settings for the service process on top of the bench's (e.g. logs and metrics off, for their cost). */
  serviceEnv: Record<string, string>;
  repoRoot: string;
}

function findRepoRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

function parseOptions(argv: string[]): Options {
  const repoRoot = findRepoRoot(benchDir);
  const options: Options = {
    quick: false,
    serviceDir: join(repoRoot, 'dist'),
    out: join(repoRoot, 'bench', 'results.json'),
    markdown: false,
    keep: false,
    profile: false,
    serviceNodeArgs: [],
    scale: false,
    storage: 'local',
    floor: 'nest',
    serviceEnv: {},
    repoRoot,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--quick') options.quick = true;
    else if (arg === '--rows') options.rows = new Set(value().split(','));
    else if (arg === '--service-dir') options.serviceDir = resolve(value());
    else if (arg === '--out') options.out = resolve(value());
    else if (arg === '--markdown') options.markdown = true;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--profile') options.profile = true;
    else if (arg === '--service-node-args') options.serviceNodeArgs = value().split(/\s+/).filter(Boolean);
    else if (arg === '--storage') {
      const storage = value();
      if (storage !== 'local' && storage !== 's3') throw new Error('--storage must be local or s3');
      options.storage = storage;
    } else if (arg === '--floor') {
      const floor = value();
      if (floor !== 'express' && floor !== 'nest') throw new Error('--floor must be express or nest');
      options.floor = floor;
    } else if (arg === '--scale') options.scale = true;
    else if (arg === '--sizes') options.sizes = value();
    else if (arg === '--service-env') {
      for (const pair of value().split(/\s+/).filter(Boolean)) {
        const split = pair.indexOf('=');
        if (split < 1) throw new Error(`--service-env takes NAME=value pairs, got ${pair}`);
        options.serviceEnv[pair.slice(0, split)] = pair.slice(split + 1);
      }
    } else if (arg === '--help' || arg === '-h') {
      process.stdout.write(
        'usage: node bench/.build/run.js [--quick] [--rows 1,3a] [--service-dir dist] [--out file] [--markdown] [--keep] [--profile] [--service-node-args "--trace-gc"] [--storage local|s3] [--floor nest|express] [--service-env "LOG_LEVEL=silent METRICS_PORT=0"] | --scale [--sizes 10k,100k,1M,10M]\n',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${arg}`);
  }
  if (!existsSync(join(options.serviceDir, 'main.js'))) {
    throw new Error(`no service build at ${options.serviceDir}/main.js (run \`npm run build\` or pass --service-dir)`);
  }
  return options;
}

/**
 * The Node flags `npm start` and the container give the service (package.json `config.nodeFlags`), read
 * from the checkout of the measured build, so that the bench runs the service as it is deployed.
 */
function startFlags(serviceDir: string): string[] {
  const manifest = join(serviceDir, '..', 'package.json');
  if (!existsSync(manifest)) return [];
  const flags = (JSON.parse(readFileSync(manifest, 'utf8')) as { config?: { nodeFlags?: string } }).config?.nodeFlags ?? '';
  return flags.split(/\s+/).filter(Boolean);
}

function gitDescription(repoRoot: string): string | undefined {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    return dirty ? `${commit} (with uncommitted changes)` : commit;
  } catch {
    return undefined;
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
  };
}

function selected(module: RowModule, options: Options): boolean {
  return !options.rows || module.rows.some((row) => options.rows!.has(row.id) || options.rows!.has(row.id.replace(/[a-z]$/, '')));
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.scale) return runScale(options);
  const scale = options.quick ? QUICK : FULL;
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const log = (message: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${message}\n`);
  const runDir = await mkdtemp(join(os.tmpdir(), 'ids-bench-'));
  const profileDir = join(runDir, 'profiles');
  log(`${options.quick ? 'quick' : 'full'} run; service build ${options.serviceDir}; work dir ${runDir}`);

  let db: BenchDatabase | undefined;
  let service: ServiceHandle | undefined;
  let baselineServer: ChildServer | undefined;
  let floorServer: ChildServer | undefined;
  let s3: BenchS3 | undefined;
  let setupPool: pg.Pool | undefined;
  let baselinePool: pg.Pool | undefined;
  const results: RowResult[] = [];
  let failed = false;
  const cleanUp = async () => {
    await setupPool?.end().catch(() => undefined);
    await baselinePool?.end().catch(() => undefined);
    await service?.server.stop().catch(() => undefined);
    await s3?.stop().catch(() => undefined);
    await baselineServer?.stop().catch(() => undefined);
    await floorServer?.stop().catch(() => undefined);
    await db?.stop().catch(() => undefined);
  };
  process.once('SIGINT', () => {
    void cleanUp().then(() => process.exit(130));
  });

  try {
    db = await provideDatabase({ serviceDir: options.serviceDir, runDir, quick: options.quick });
    log(`database: ${db.kind}, PostgreSQL ${db.serverVersion}`);
    if (options.storage === 's3') {
      s3 = new BenchS3(await startS3Server({ benchDir, runDir, repoRoot: options.repoRoot }, 'bench'), 'bench');
      log(`S3 server (s3rver) pid ${s3.server.child.pid} at ${s3.server.url}`);
    }
    service = await startService({
      serviceDir: options.serviceDir,
      databaseUrl: db.serviceUrl,
      runDir,
      repoRoot: options.repoRoot,
      extraEnv: { ...s3?.serviceEnv(), ...options.serviceEnv },
      nodeArgs: [...startFlags(options.serviceDir), ...(options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...options.serviceNodeArgs],
    });
    log(`service pid ${service.server.child.pid} at ${service.url}`);
    await db.grantBaseline();
    baselineServer = await startBaselineServer({ benchDir, runDir, repoRoot: options.repoRoot, serviceDir: options.serviceDir });
    floorServer = await startFloorServer(
      { benchDir, runDir, repoRoot: options.repoRoot, serviceDir: options.serviceDir },
      options.floor,
      { url: db.baselineUrl, poolSize: SERVICE_SETTINGS.databasePoolSize },
      startFlags(options.serviceDir),
    );
    setupPool = poolFor(db.setupUrl, 4);
    baselinePool = poolFor(db.baselineUrl, 24);
    const admin = new Api(service.url, { 'X-Api-Key': service.adminKey });
    const ctx: RowContext = {
      scale,
      runId: `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`,
      service,
      admin,
      routes: await admin.routes(),
      baselineServer,
      floorServer,
      floorName: options.floor === 'nest' ? 'bare NestJS' : 'bare Express',
      baselineFilesDir: baselineFilesDir(runDir),
      db,
      setupPool,
      baselinePool,
      sqlStats: new SqlStats(db.statementStats ? setupPool : undefined),
      statements: await loadServiceStatements(options.serviceDir),
      cpu: { service: service.server.probe, database: db.kind === 'embedded' ? new ClusterCpu(join(runDir, 'pg')) : undefined },
      runDir,
      s3,
      shared: new Map(),
      log,
      startServiceVariant: (name, settings) =>
        startService({
          serviceDir: options.serviceDir,
          databaseUrl: db!.serviceUrl,
          runDir: join(runDir, name),
          repoRoot: options.repoRoot,
          extraEnv: { ...s3?.serviceEnv(), ...options.serviceEnv, ...settings },
          nodeArgs: [...startFlags(options.serviceDir), ...(options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...options.serviceNodeArgs],
        }),
    };

    for (const module of ALL_ROWS) {
      if (!selected(module, options)) continue;
      const missing = module.requires.filter((route) => !ctx.routes.has(route));
      if (missing.length > 0) {
        for (const row of module.rows) results.push(skippedRow(row, `not served yet: ${missing.join(', ')}`));
        log(`rows ${module.rows.map((r) => r.id).join(', ')}: skipped (missing ${missing.join(', ')})`);
        continue;
      }
      const rowStarted = Date.now();
      log(`rows ${module.rows.map((r) => r.id).join(', ')}: ${module.rows[0].title}`);
      try {
        results.push(...(await module.run(ctx)));
      } catch (error) {
        failed = true;
        const reason = error instanceof MeasurementError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
        log(`rows ${module.rows.map((r) => r.id).join(', ')} failed: ${reason}`);
        for (const row of module.rows) {
          if (!results.some((r) => r.id === row.id)) results.push(failedRow(row, reason.split('\n')[0]));
        }
        if (!service.server.running) throw new Error(`the service died:\n${await service.server.logTail()}`);
      }
      log(`  done in ${((Date.now() - rowStarted) / 1000).toFixed(1)} s`);
    }
  } catch (error) {
    failed = true;
    log(`run aborted: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await cleanUp();
  }

  const finishedAt = new Date();
  const report = {
    meta: {
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      durationS: Math.round((finishedAt.getTime() - startedAt.getTime()) / 100) / 10,
      mode: options.quick ? 'quick' : 'full',
      storage: options.storage,
      commit: gitDescription(options.repoRoot),
      machine: machine(),
      /** 1-minute load average before and after: a busy machine shows here. */
      loadAverage: { before: loadBefore[0], after: os.loadavg()[0] },
      database: db && { kind: db.kind, serverVersion: db.serverVersion, settings: db.settings },
      serviceEnv: options.serviceEnv,
      scale,
    },
    rows: results,
  };
  await mkdir(dirname(options.out), { recursive: true });
  await writeFile(options.out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\n${textTable(results)}\n\n`);
  process.stdout.write(`${cpuPerUnitTable(results)}\n\n`);
  const sqlSummary = sqlPerRequest(results);
  if (sqlSummary) process.stdout.write(`${sqlSummary}\n\n`);
  if (options.markdown) process.stdout.write(`${markdownTable(results)}\n\n`);
  if (options.profile) {
    process.stdout.write(`service CPU profile (${profileDir}):\n${await summariseProfiles(profileDir).catch((error: unknown) => String(error))}\n\n`);
  }
  process.stdout.write(`results: ${options.out} (${report.meta.durationS} s)\n`);
  if (options.keep || options.profile || failed) process.stdout.write(`logs kept in ${runDir}\n`);
  else await rm(runDir, { recursive: true, force: true });
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
