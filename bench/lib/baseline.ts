import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type ChildServer, spawnNode } from './processes.js';

/** Starts bench/baseline-server.js (the raw node:http baselines) and waits for its port. */
export async function startBaselineServer(options: { benchDir: string; runDir: string; repoRoot: string }): Promise<ChildServer> {
  const dir = join(options.runDir, 'baseline-files');
  await mkdir(dir, { recursive: true });
  const server = spawnNode(
    'baseline server',
    join(options.benchDir, 'baseline-server.js'),
    ['--dir', dir],
    { PATH: process.env.PATH, NODE_ENV: 'production' },
    join(options.runDir, 'baseline.log'),
    options.repoRoot,
  );
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error('baseline server did not start within 15 s')), 15_000);
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
      reject(new Error(`baseline server exited with ${code}`));
    });
  });
  server.url = `http://127.0.0.1:${port}`;
  return server;
}

export function baselineFilesDir(runDir: string): string {
  return join(runDir, 'baseline-files');
}
