import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The built service and the admin CLI as real processes (`node dist/...`, on the Node that runs the tests),
 * for what only a process shows: start-up failures, exit codes, DATA_DIR locking, the CLI.
 */

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Node's on-disk code cache for the children (NODE_COMPILE_CACHE): every child compiles the same dist/ and
 * node_modules, a few dozen times a run; with the cache only the first does (a quarter of a start's CPU). It
 * changes nothing a child does, only how fast its JavaScript loads. One folder per user in the temporary
 * directory, shared by the runs (Node keys its entries by file and content).
 */
export const COMPILE_CACHE = join(tmpdir(), `ids-node-compile-cache-${process.getuid?.() ?? 'user'}`);

/**
 * Environment of a child: the caller's settings only, on top of PATH and the like (no inherited service
 * settings). Metrics are off unless asked for: processes running side by side cannot all have port 9464.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR, LANG } = process.env;
  return { PATH, HOME, TMPDIR, LANG, NODE_COMPILE_CACHE: COMPILE_CACHE, NODE_ENV: 'production', METRICS_PORT: '0', ...env };
}

/** Runs `node dist/<entry> ...args` to its end. */
export function runBuilt(entry: string, args: string[], env: Record<string, string>): Promise<Finished> {
  const child = spawn(process.execPath, [join('dist', entry), ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  return finished(child);
}

function finished(child: ChildProcess, output = { stdout: '', stderr: '' }): Promise<Finished> {
  child.stdout!.on('data', (chunk: Buffer) => (output.stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output.stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, ...output }));
  });
}

export interface RunningService {
  process: ChildProcess;
  url: string;
  output: { stdout: string; stderr: string };
  /** SIGTERM, then the exit. */
  stop(): Promise<Finished>;
}

/**
 * Starts `node dist/main.js` (or another build's `main`, run from `cwd`) on a free port; resolves once it
 * listens, rejects if it exits first.
 */
export async function startService(env: Record<string, string>, build: { main?: string; cwd?: string } = {}): Promise<RunningService> {
  const port = await freePort();
  const child = spawn(process.execPath, [build.main ?? 'dist/main.js'], {
    cwd: build.cwd,
    env: childEnv({ PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const exit = finished(child, output);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => {
      if (output.stdout.includes('Listening on')) resolve();
    });
    void exit.then((end) => reject(new Error(`the service exited (${end.code}) before listening: ${end.stderr}`)));
  });
  return {
    process: child,
    url: `http://127.0.0.1:${port}`,
    output,
    stop: () => {
      child.kill('SIGTERM');
      return exit;
    },
  };
}

/** A port free on 127.0.0.1 right now (the OS's pick), for a process the test starts itself. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A fresh DATA_DIR that the embedded PostgreSQL's system user can reach when the tests run as root. */
export async function dataDir(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'ids-proc-'));
  await chmod(directory, 0o755);
  return directory;
}
