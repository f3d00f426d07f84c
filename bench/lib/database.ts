import { randomBytes } from 'node:crypto';
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

/** Database roles of the embedded set-up: pg_stat_statements keeps statistics per role, so each side is told apart. */
export const SERVICE_ROLE = 'ids_service';
export const BASELINE_ROLE = 'bench_baseline';

export interface BenchDatabase {
  /** The URL given to the service (role ids_service, owner of the bench database). */
  serviceUrl: string;
  /** The URL of the raw `pg` baselines: the same database, as role bench_baseline (same URL without roles). */
  baselineUrl: string;
  /** A superuser (or the DATABASE_URL user) for seeding, VACUUM and statistics. */
  setupUrl: string;
  kind: 'embedded' | 'DATABASE_URL';
  /** pg_stat_statements is loaded and service and baseline run as different roles. */
  statementStats: boolean;
  /** The cluster's settings that matter for write-heavy rows, for the record. */
  settings: Record<string, string>;
  serverVersion: string;
  /** Grants the baseline role the service's tables; call after the service ran its migrations. */
  grantBaseline(): Promise<void>;
  stop(): Promise<void>;
}

function withCredentials(url: string, user: string, password: string, database: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Embedded (default): a PostgreSQL cluster started from the service build under test
 * (dist/database/embedded-postgres.js, the service's own settings; `ephemeral` only in --quick mode),
 * restarted once with pg_stat_statements loaded, a database `bench` owned by a non-superuser service role,
 * and a second role for the raw baselines. Service, baselines and seeding all use that one database.
 *
 * DATABASE_URL: used as is for everything. It must name a throwaway database: the bench seeds data into it.
 */
export async function provideDatabase(options: { serviceDir: string; runDir: string; quick: boolean }): Promise<BenchDatabase> {
  let database: Omit<BenchDatabase, 'settings' | 'serverVersion'>;
  if (process.env.DATABASE_URL) {
    const url = process.env.DATABASE_URL;
    database = {
      serviceUrl: url,
      baselineUrl: url,
      setupUrl: url,
      kind: 'DATABASE_URL',
      statementStats: false,
      grantBaseline: async () => undefined,
      stop: async () => undefined,
    };
  } else {
    const module = (await import(pathToFileURL(join(options.serviceDir, 'database', 'embedded-postgres.js')).href)) as EmbeddedModule;
    const directory = join(options.runDir, 'pg');
    let cluster = await module.EmbeddedDatabase.start(directory, { ephemeral: options.quick });
    await withClient(cluster.adminUrl, (client) => client.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`));
    await cluster.stop();
    cluster = await module.EmbeddedDatabase.start(directory, { ephemeral: options.quick });
    const servicePassword = randomBytes(18).toString('base64url');
    const baselinePassword = randomBytes(18).toString('base64url');
    await withClient(cluster.adminUrl, async (client) => {
      await client.query(`CREATE ROLE ${SERVICE_ROLE} LOGIN PASSWORD '${servicePassword}'`);
      await client.query(`CREATE ROLE ${BASELINE_ROLE} LOGIN PASSWORD '${baselinePassword}'`);
      await client.query(`CREATE DATABASE bench OWNER ${SERVICE_ROLE}`);
    });
    const setupUrl = withCredentials(cluster.adminUrl, 'postgres', decodeURIComponent(new URL(cluster.adminUrl).password), 'bench');
    await withClient(setupUrl, (client) => client.query('CREATE EXTENSION pg_stat_statements'));
    const running = cluster;
    database = {
      serviceUrl: withCredentials(cluster.adminUrl, SERVICE_ROLE, servicePassword, 'bench'),
      baselineUrl: withCredentials(cluster.adminUrl, BASELINE_ROLE, baselinePassword, 'bench'),
      setupUrl,
      kind: 'embedded',
      statementStats: true,
      grantBaseline: () =>
        withClient(setupUrl, async (client) => {
          await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${BASELINE_ROLE}`);
          await client.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${BASELINE_ROLE}`);
        }),
      stop: () => running.stop(),
    };
  }
  const settings: Record<string, string> = {};
  let serverVersion = '';
  await withClient(database.setupUrl, async (client) => {
    serverVersion = ((await client.query('SHOW server_version')).rows[0] as { server_version: string }).server_version;
    for (const name of ['fsync', 'synchronous_commit', 'shared_buffers', 'max_connections', 'shared_preload_libraries']) {
      const row = (await client.query(`SELECT current_setting($1) AS value`, [name])).rows[0] as { value: string };
      settings[name] = row.value;
    }
  });
  return { ...database, settings, serverVersion };
}

export function poolFor(url: string, max: number): pg.Pool {
  return new pg.Pool({ connectionString: url, max });
}
