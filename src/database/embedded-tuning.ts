import { readFileSync } from 'node:fs';
import os from 'node:os';

/** PostgreSQL settings as `-c name=value` pairs, values in PostgreSQL's own units (`2GB`, `16MB`, `1.1`). */
export type PgSettings = Record<string, string>;

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * The memory this process may use: the machine's, or less when a cgroup (a container) limits it, since
 * PostgreSQL sized for the host inside a smaller container is killed by the OOM killer under load.
 */
export function visibleMemoryBytes(): number {
  const limits = [os.totalmem()];
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const raw = readFileSync(file, 'utf8').trim();
      // cgroup v2 says "max" for no limit; v1 says a number near 2^63.
      if (/^\d+$/.test(raw) && Number(raw) < 2 ** 60) limits.push(Number(raw));
    } catch {
      // Not in a cgroup of that version.
    }
  }
  return Math.min(...limits);
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
const mb = (bytes: number) => `${Math.floor(bytes / MiB)}MB`;

/**
 * Settings for an embedded PostgreSQL that shares its machine with the service (the usual rules of thumb,
 * e.g. PGTune's for a mixed workload, with caps): a quarter of memory for shared_buffers (at most 8 GB),
 * the kernel cache counted in effective_cache_size, per-sort memory sized so that the 200 allowed
 * connections cannot exhaust memory together, and SSD costs, since the data directory is a local disk.
 */
export function tunedSettings(memoryBytes: number): PgSettings {
  return {
    shared_buffers: mb(clamp(memoryBytes / 4, 128 * MiB, 8 * GiB)),
    effective_cache_size: mb(clamp((memoryBytes * 3) / 4, 512 * MiB, 96 * GiB)),
    work_mem: mb(clamp(memoryBytes / 4 / 200, 4 * MiB, 64 * MiB)),
    maintenance_work_mem: mb(clamp(memoryBytes / 16, 64 * MiB, 2 * GiB)),
    max_wal_size: mb(clamp(memoryBytes / 4, 1 * GiB, 16 * GiB)),
    random_page_cost: '1.1',
  };
}

const NAME = /^[a-z][a-z0-9_]*$/;
const VALUE = /^[A-Za-z0-9._+-]+$/;

/**
 * Parses `EMBEDDED_PG_SETTINGS` (`name=value,name=value`). Only plain names and values: they become
 * command-line flags of the PostgreSQL process, so nothing that could smuggle in another flag passes.
 */
export function parsePgSettings(raw: string): PgSettings {
  const settings: PgSettings = {};
  for (const part of raw.split(',').map((item) => item.trim())) {
    if (part === '') continue;
    const [name, value, ...rest] = part.split('=').map((item) => item.trim());
    if (rest.length > 0 || value === undefined || !NAME.test(name) || !VALUE.test(value)) {
      throw new Error(`"${part}" is not name=value (letters, digits, '_' in the name; letters, digits, '.', '_', '+', '-' in the value)`);
    }
    // The service learns that PostgreSQL is ready from its stderr: with the collector the line never comes.
    if (name === 'logging_collector') throw new Error('logging_collector cannot be set: the service reads the server log from its stderr');
    settings[name] = value;
  }
  return settings;
}

/** `name=value, …` for the start-up line. */
export function describeSettings(settings: PgSettings): string {
  return Object.entries(settings)
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');
}
