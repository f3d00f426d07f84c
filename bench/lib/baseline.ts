import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnNode, type ChildServer } from './processes.js';

/**
 * Starts bench/baseline-server.js (the raw node:http baselines, and row 7's digest floor through the
 * service build's digest worker) and waits for its port.
 */
export async function startBaselineServer(options: { benchDir: string; runDir: string; repoRoot: string; serviceDir: string }): Promise<ChildServer> {
  const dir = join(options.runDir, 'baseline-files');
  await mkdir(dir, { recursive: true });
  const digestWorker = join(options.serviceDir, 'filebox', 'digest-worker.js');
  return startListening(
    'baseline server',
    join(options.benchDir, 'baseline-server.js'),
    ['--dir', dir, '--digest-worker', digestWorker],
    'baseline.log',
    options,
  );
}

/** Starts bench/s3-server.js (s3rver with one bucket) for `--storage s3` and waits for its port. */
export async function startS3Server(options: { benchDir: string; runDir: string; repoRoot: string }, bucket: string): Promise<ChildServer> {
  const dir = join(options.runDir, 's3-data');
  await mkdir(dir, { recursive: true });
  return startListening('S3 server', join(options.benchDir, 's3-server.js'), ['--dir', dir, '--bucket', bucket], 's3-server.log', options);
}

/** Which framework the stack floor runs on (`--floor`). */
export type FloorKind = 'express' | 'nest';

/**
 * Starts the stack floor of rows 2f, 3bf and 6f (bench/floor/<kind>-server.js) with the service's Node flags
 * and pool size, connected to the benchmark database as the baselines' role, and waits for its port.
 */
export async function startFloorServer(
  options: { benchDir: string; runDir: string; repoRoot: string; serviceDir: string },
  kind: FloorKind,
  database: { url: string; poolSize: number },
  nodeArgs: string[],
): Promise<ChildServer> {
  const args = ['--database-url', database.url, '--pool-size', String(database.poolSize), '--service-dir', options.serviceDir];
  return startListening('floor server', join(options.benchDir, 'floor', `${kind}-server.js`), args, 'floor.log', options, nodeArgs);
}

/** Spawns a bench helper that prints `LISTENING <port>`; its url is set from that port. */
async function startListening(
  name: string,
  script: string,
  args: string[],
  logName: string,
  options: { runDir: string; repoRoot: string },
  nodeArgs: string[] = [],
): Promise<ChildServer> {
  const env = { PATH: process.env.PATH, NODE_ENV: 'production' };
  const server = spawnNode(name, script, args, env, join(options.runDir, logName), options.repoRoot, nodeArgs);
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 15 s`)), 15_000);
    server.child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /LISTENING (\d+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    server.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}`));
    });
  });
  server.url = `http://127.0.0.1:${port}`;
  return server;
}

export function baselineFilesDir(runDir: string): string {
  return join(runDir, 'baseline-files');
}
