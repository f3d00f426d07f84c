import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

/** The part of the service's dist/database/embedded-postgres.js the bench uses. */
interface EmbeddedDatabaseLike {
  adminUrl: string;
  url: string;
  createDatabase(name: string, ifMissing?: boolean): Promise<string>;
  stop(): Promise<void>;
}
interface EmbeddedModule {
  EmbeddedDatabase: { start(directory: string, options?: { ephemeral?: boolean }): Promise<EmbeddedDatabaseLike> };
}

export interface BenchDatabase {
  /** The URL given to the service and used by the raw `pg` baselines: both talk to the same database. */
  url: string;
  kind: 'embedded' | 'DATABASE_URL';
  /** The cluster's settings that matter for write-heavy rows, for the record. */
  settings: Record<string, string>;
  serverVersion: string;
  stop(): Promise<void>;
}

/**
 * `DATABASE_URL` when the caller set it (it must be a throwaway database: the bench seeds data into
 * it), otherwise an embedded PostgreSQL started from the service build under test, with the same
 * settings the service itself would use (`ephemeral` only in --quick mode, where timings do not matter).
 */
export async function provideDatabase(options: { serviceDir: string; runDir: string; quick: boolean }): Promise<BenchDatabase> {
  let url: string;
  let kind: BenchDatabase['kind'];
  let stop = async () => undefined as void;
  if (process.env.DATABASE_URL) {
    url = process.env.DATABASE_URL;
    kind = 'DATABASE_URL';
  } else {
    const module = (await import(pathToFileURL(join(options.serviceDir, 'database', 'embedded-postgres.js')).href)) as EmbeddedModule;
    const cluster = await module.EmbeddedDatabase.start(join(options.runDir, 'pg'), { ephemeral: options.quick });
    url = await cluster.createDatabase('bench', true);
    kind = 'embedded';
    stop = () => cluster.stop();
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const settings: Record<string, string> = {};
  let serverVersion = '';
  try {
    serverVersion = ((await client.query('SHOW server_version')).rows[0] as { server_version: string }).server_version;
    for (const name of ['fsync', 'synchronous_commit', 'shared_buffers', 'max_connections']) {
      const row = (await client.query(`SELECT current_setting($1) AS value`, [name])).rows[0] as { value: string };
      settings[name] = row.value;
    }
  } finally {
    await client.end();
  }
  return { url, kind, settings, serverVersion, stop };
}

export function poolFor(url: string, max: number): pg.Pool {
  return new pg.Pool({ connectionString: url, max });
}
