import type pg from 'pg';
import type { ServiceStatements } from '../rows/service-statements.js';
import type { Api } from './api.js';
import { addCpu, cpuDelta, cpuSnapshot, perUnit, type CpuPerUnit, type CpuSnapshot, type CpuSources } from './cpu.js';
import type { BenchDatabase } from './database.js';
import { LatencyRecorder } from './latency.js';
import { failureCount, type LoadOutcome } from './load.js';
import { MemoryWindow, type MemoryFigures, type ProcessProbe } from './memory.js';
import type { ChildServer } from './processes.js';
import type { BenchS3 } from './s3.js';
import type { Scale } from './scale.js';
import type { ServiceHandle } from './service.js';
import type { SqlFigures, SqlStats } from './sql-stats.js';

/** One side of a row (the service path, or its baseline), all rounds together. */
export interface SideResult {
  /** What ran, e.g. `GET /health/live (service)` or `raw pg: same keyset SQL`. */
  label: string;
  /** Work units per second (the row's `unit`). */
  throughput: number;
  /** Work units done in all measured rounds. */
  units: number;
  requests: number;
  /** Requests including the warm-up (what the per-request SQL figures are divided by). */
  allRequests: number;
  elapsedS: number;
  p50Ms?: number;
  p99Ms?: number;
  /** Memory and CPU of the process that served this side (the service, or the baseline server). */
  memory?: MemoryFigures;
  /** CPU milliseconds per unit, by process, over the measured phases of this side (warm-up excluded). */
  cpuPerUnit?: CpuPerUnit;
}

export interface RowResult {
  id: string;
  title: string;
  status: 'ok' | 'skipped' | 'error';
  reason?: string;
  /** Unit of `throughput`, e.g. `req/s`, `objects/s`, `MiB/s`. */
  unit: string;
  service?: SideResult;
  baseline?: SideResult;
  /** service throughput / baseline throughput. */
  ratio?: number;
  target: { minRatio?: number; maxGrowthMiB?: number };
  /** Whether every target of the row was met; absent for report-only rows and failed rows. */
  met?: boolean;
  /** What each side ran in PostgreSQL during the row (pg_stat_statements; embedded database only). */
  sql?: SqlFigures;
  notes: string[];
}

/** Everything a row needs; built once by run.ts. */
export interface RowContext {
  scale: Scale;
  /** Short unique suffix for the names a row creates, so reruns against one DATABASE_URL never clash. */
  runId: string;
  service: ServiceHandle;
  /** The service with the admin key. */
  admin: Api;
  /** `METHOD /path/{param}` of every route the service serves (from /openapi.json). */
  routes: Set<string>;
  baselineServer: ChildServer;
  /** The stack floor of rows 2f, 3bf and 6f (bench/floor/): bare Express or bare NestJS (`--floor`), and pg. */
  floorServer: ChildServer;
  /** What the floor runs on, for labels: `bare Express` or `bare NestJS`. */
  floorName: string;
  baselineFilesDir: string;
  db: BenchDatabase;
  /** Superuser pool on the service's database for seeding, VACUUM and checks (never timed). */
  setupPool: pg.Pool;
  /** Pool of the raw `pg` baselines, on the same database as their own role. */
  baselinePool: pg.Pool;
  sqlStats: SqlStats;
  /** The service build's own statements with their parameter builders, for the raw baselines and the seeding. */
  statements: ServiceStatements;
  /** The service process and the database cluster, for CPU accounting per phase. */
  cpu: CpuSources;
  runDir: string;
  /** `--storage s3`: the service stores files there, and rows 7 and 8 compare against raw SDK transfers to it. */
  s3?: BenchS3;
  /** Data rows hand to later rows (e.g. the uploaded 1 GiB file for the download row). */
  shared: Map<string, unknown>;
  /**
   * Another instance of the measured build on the same database, with these settings on top of the main
   * service's (row 19: `AUDIT=off`); the row stops it.
   */
  startServiceVariant: (name: string, settings: Record<string, string>) => Promise<ServiceHandle>;
  log: (message: string) => void;
}

export interface RowModule {
  /** The rows this module produces, in order, with their titles, units and targets. */
  rows: { id: string; title: string; unit: string; target: RowResult['target'] }[];
  /** Routes (`METHOD /path`) that must exist; the rows are reported as skipped while one is missing. */
  requires: string[];
  run(ctx: RowContext): Promise<RowResult[]>;
}

/** A measured phase and the work units it did (default: its successful requests). */
export interface Phase {
  outcome: LoadOutcome;
  units?: number;
}

export interface CompareSpec {
  rounds: number;
  serviceLabel: string;
  baselineLabel: string;
  /** Untimed warm-up of each side (JIT, connection pools, caches), run once before the rounds. */
  warmService?: () => Promise<unknown>;
  warmBaseline?: () => Promise<unknown>;
  service: (round: number) => Promise<Phase>;
  baseline: (round: number) => Promise<Phase>;
  /** Untimed preparation before each measured phase (e.g. seeding its data); outside the CPU accounting. */
  prepareService?: (round: number) => Promise<void>;
  prepareBaseline?: (round: number) => Promise<void>;
  /** Processes to charge CPU time to (the baseline server is added from `baselineProbe`). */
  cpu?: CpuSources;
  serviceProbe: ProcessProbe;
  /** The process serving the baseline when it is a server of its own (not the bench's pg client). */
  baselineProbe?: ProcessProbe;
  /** Statement statistics of the row; see SqlStats. */
  sql?: SqlStats;
  /**
   * The baseline is a raw `pg` client claiming to run the service's statements: fail the row when it ran
   * a statement the service did not (the bench's copy of the SQL has drifted from the service's code).
   */
  sqlParity?: boolean;
  /** Both sides go through the service (rows 1, 9): per-request SQL figures are then over both sides' requests. */
  bothSidesThroughService?: boolean;
}

export class MeasurementError extends Error {}

function describeFailures(label: string, outcome: LoadOutcome): string {
  const { statuses, errors, timeouts, firstFailure } = outcome.failures;
  const parts = Object.entries(statuses).map(([status, count]) => `${count}× HTTP ${status}`);
  if (errors) parts.push(`${errors} errors`);
  if (timeouts) parts.push(`${timeouts} timeouts`);
  return `${label}: ${parts.join(', ')}${firstFailure ? ` (first: ${firstFailure})` : ''}`;
}

/**
 * The phases of a row whose sides are loads run for a time: each side's warm-up for `warmupSeconds`, each
 * measured phase for `seconds` (one request a unit).
 */
export function timedPhases(
  service: (seconds: number) => Promise<LoadOutcome>,
  baseline: (seconds: number) => Promise<LoadOutcome>,
  warmupSeconds: number,
  seconds: number,
): Pick<CompareSpec, 'warmService' | 'warmBaseline' | 'service' | 'baseline'> {
  return {
    warmService: () => service(warmupSeconds),
    warmBaseline: () => baseline(warmupSeconds),
    service: async () => ({ outcome: await service(seconds) }),
    baseline: async () => ({ outcome: await baseline(seconds) }),
  };
}

/**
 * Measures a service path and its baseline side by side: after one warm-up each, the two alternate for
 * `rounds` rounds (service first in even rounds, baseline first in odd ones) so that drift on a noisy
 * machine hits both equally. Throughput is total units over total measured time; latency percentiles
 * are over every request of every round. Any failed request makes the row an error: a fast wrong
 * answer is not a measurement.
 */
export async function compare(spec: CompareSpec): Promise<{ service: SideResult; baseline: SideResult; sql?: SqlFigures }> {
  await spec.sql?.reset();
  const serviceWindow = new MemoryWindow(spec.serviceProbe).start();
  const baselineWindow = spec.baselineProbe ? new MemoryWindow(spec.baselineProbe).start() : undefined;
  const warmRequests = (result: unknown): number => {
    if (result && typeof result === 'object') {
      if ('outcome' in result) return (result as Phase).outcome.requests;
      if ('requests' in result) return (result as LoadOutcome).requests;
    }
    return 0;
  };
  const noCpu: CpuSnapshot = { service: 0, bench: 0 };
  const sides = {
    service: { phases: [] as Phase[], run: spec.service, prepare: spec.prepareService, label: spec.serviceLabel, warm: 0, cpu: noCpu },
    baseline: { phases: [] as Phase[], run: spec.baseline, prepare: spec.prepareBaseline, label: spec.baselineLabel, warm: 0, cpu: noCpu },
  };
  const cpuSources = spec.cpu && { ...spec.cpu, baselineServer: spec.baselineProbe };
  sides.service.warm = warmRequests(await spec.warmService?.());
  sides.baseline.warm = warmRequests(await spec.warmBaseline?.());
  for (let round = 0; round < spec.rounds; round++) {
    const order = round % 2 === 0 ? [sides.service, sides.baseline] : [sides.baseline, sides.service];
    for (const side of order) {
      await side.prepare?.(round);
      const before = cpuSources && cpuSnapshot(cpuSources);
      const phase = await side.run(round);
      if (before) side.cpu = addCpu(side.cpu, cpuDelta(before, cpuSnapshot(cpuSources!)));
      if (failureCount(phase.outcome) > 0) throw new MeasurementError(describeFailures(side.label, phase.outcome));
      side.phases.push(phase);
    }
  }
  const summarise = (side: typeof sides.service, memory?: MemoryFigures): SideResult => {
    const latency = new LatencyRecorder();
    let units = 0;
    let requests = 0;
    let elapsedS = 0;
    for (const phase of side.phases) {
      latency.merge(phase.outcome.latency);
      units += phase.units ?? phase.outcome.requests;
      requests += phase.outcome.requests;
      elapsedS += phase.outcome.elapsedS;
    }
    return {
      label: side.label,
      throughput: units / elapsedS,
      units,
      requests,
      allRequests: requests + side.warm,
      elapsedS,
      p50Ms: latency.percentile(50),
      p99Ms: latency.percentile(99),
      memory,
      cpuPerUnit: cpuSources ? perUnit(side.cpu, units) : undefined,
    };
  };
  const service = summarise(sides.service, serviceWindow.stop());
  const baseline = summarise(sides.baseline, baselineWindow?.stop());
  const sql = await spec.sql?.collect({
    service: spec.bothSidesThroughService ? service.allRequests + baseline.allRequests : service.allRequests,
    baseline: baseline.allRequests,
  });
  if (spec.sqlParity && sql && sql.baselineOnly.length > 0) {
    throw new MeasurementError(
      `the raw pg baseline ran SQL the service did not (its statement or values are not the service's: load both from the build, bench/rows/service-statements.ts): ${sql.baselineOnly.join(' | ')}`,
    );
  }
  return { service, baseline, sql };
}

/** The probes of a floor row's measured side: the floor server takes the service's place. */
export function floorSide(ctx: RowContext): Pick<CompareSpec, 'serviceProbe' | 'cpu'> {
  return { serviceProbe: ctx.floorServer.probe, cpu: { ...ctx.cpu, service: ctx.floorServer.probe } };
}

/** Fills in ratio and verdict. */
export function finishRow(
  row: RowModule['rows'][number],
  measured: { service: SideResult; baseline: SideResult; sql?: SqlFigures },
  notes: string[] = [],
): RowResult {
  const ratio = measured.service.throughput / measured.baseline.throughput;
  let met: boolean | undefined;
  if (row.target.minRatio !== undefined) met = ratio >= row.target.minRatio;
  if (row.target.maxGrowthMiB !== undefined) {
    const growthOk = (measured.service.memory?.growthMiB ?? Infinity) < row.target.maxGrowthMiB;
    met = (met ?? true) && growthOk;
  }
  return { ...row, status: 'ok', ...measured, ratio, met, notes };
}

export function skippedRow(row: RowModule['rows'][number], reason: string): RowResult {
  return { ...row, status: 'skipped', reason, notes: [] };
}

export function failedRow(row: RowModule['rows'][number], reason: string): RowResult {
  return { ...row, status: 'error', reason, notes: [] };
}
