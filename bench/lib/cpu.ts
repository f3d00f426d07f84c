import { readdirSync, readFileSync } from 'node:fs';
import { ticksPerSecond, type ProcessProbe } from './memory.js';

/** CPU seconds used so far by a PostgreSQL cluster: the postmaster, its live children and its reaped ones. */
export class ClusterCpu {
  constructor(private readonly dataDir: string) {}

  seconds(): number | undefined {
    let postmaster: number;
    try {
      postmaster = Number(readFileSync(`${this.dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
    const ticks = ticksPerSecond();
    const fieldsOf = (pid: number | string): string[] | undefined => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      } catch {
        return undefined;
      }
    };
    const own = fieldsOf(postmaster);
    if (!own) return undefined;
    // utime, stime, cutime, cstime are fields 14–17; after the command name they are at 11–14.
    let total = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const fields = fieldsOf(entry);
      if (fields && Number(fields[1]) === postmaster) total += Number(fields[11]) + Number(fields[12]);
    }
    return total / ticks;
  }
}

/** The processes whose CPU time a phase is charged with. */
export interface CpuSources {
  service: ProcessProbe;
  database?: ClusterCpu;
  baselineServer?: ProcessProbe;
}

export interface CpuSnapshot {
  service: number;
  database?: number;
  bench: number;
  baselineServer?: number;
}

export function cpuSnapshot(sources: CpuSources): CpuSnapshot {
  const usage = process.cpuUsage();
  return {
    service: sources.service.cpuSeconds() ?? 0,
    database: sources.database?.seconds(),
    bench: (usage.user + usage.system) / 1e6,
    baselineServer: sources.baselineServer?.cpuSeconds(),
  };
}

/** CPU milliseconds per work unit of one side, by process. */
export interface CpuPerUnit {
  /** The service process. */
  serviceMs: number;
  /** All PostgreSQL processes (embedded database only). */
  databaseMs?: number;
  /** The bench process itself: load generator, and the raw `pg` baselines' client. */
  benchMs: number;
  /** The raw node:http baseline server. */
  baselineServerMs?: number;
}

export function cpuDelta(before: CpuSnapshot, after: CpuSnapshot): CpuSnapshot {
  const minus = (a?: number, b?: number) => (a !== undefined && b !== undefined ? a - b : undefined);
  return {
    service: after.service - before.service,
    database: minus(after.database, before.database),
    bench: after.bench - before.bench,
    baselineServer: minus(after.baselineServer, before.baselineServer),
  };
}

export function addCpu(a: CpuSnapshot, b: CpuSnapshot): CpuSnapshot {
  const plus = (x?: number, y?: number) => (x !== undefined && y !== undefined ? x + y : (x ?? y));
  return {
    service: a.service + b.service,
    database: plus(a.database, b.database),
    bench: a.bench + b.bench,
    baselineServer: plus(a.baselineServer, b.baselineServer),
  };
}

export function perUnit(total: CpuSnapshot, units: number): CpuPerUnit {
  const ms = (seconds?: number) => (seconds === undefined ? undefined : Math.round(((seconds * 1000) / units) * 1000) / 1000);
  return {
    serviceMs: ms(total.service)!,
    databaseMs: ms(total.database),
    benchMs: ms(total.bench)!,
    baselineServerMs: ms(total.baselineServer),
  };
}
