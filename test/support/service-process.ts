import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from './test-app.js';

/** The built service (`node dist/main.js`) running as a child process, as an operator starts it. */
export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  adminKey: string;
  /** The database it runs on (unset when it started the embedded one). */
  databaseUrl?: string;
  /** Everything the process wrote to stdout and stderr so far. */
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit (SIGKILL after 20 s); removes the data directory. */
  stop: () => Promise<number | null>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface ServiceOptions {
  /** Settings on top of the defaults (a fresh test database, a free PORT, METRICS_PORT=0, a fresh DATA_DIR). */
  env?: Record<string, string | undefined>;
  /** The build to run (default: this checkout's dist/main.js) and the directory to run it from. */
  script?: string;
  cwd?: string;
  /** Do not wait for `/health/ready` (for a start that is expected to fail). */
  noWait?: boolean;
}

export async function startServiceProcess(options: ServiceOptions = {}): Promise<ServiceProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ids-proc-'));
  const port = await freePort();
  const adminKey = randomBytes(24).toString('base64url');
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    METRICS_PORT: '0',
    DATA_DIR: dataDir,
    ADMIN_API_KEY: adminKey,
    ...options.env,
  };
  if (!options.env || !('DATABASE_URL' in options.env)) env.DATABASE_URL = await createDatabase();
  for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
  const child = spawn(process.execPath, [options.script ?? resolve('dist/main.js')], {
    cwd: options.cwd ?? process.cwd(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(killer);
    await rm(dataDir, { recursive: true, force: true });
    return code;
  };
  const service = { child, url, adminKey, databaseUrl: env.DATABASE_URL, stdout: () => stdout, stderr: () => stderr, exited, stop };
  if (!options.noWait) await waitForReady(service);
  return service;
}

async function waitForReady(service: ServiceProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  let exited = false;
  void service.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    try {
      if ((await fetch(`${service.url}/health/ready`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  await service.stop();
  throw new Error(`the service did not become ready:\n${service.stderr()}\n${service.stdout().slice(-4000)}`);
}

/** The JSON lines of a log output (every line must be one). */
export function logLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
