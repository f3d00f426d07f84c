import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { serviceSettingsEnv } from '../rows/service-statements.js';
import { spawnNode, waitForHttp, type ChildServer } from './processes.js';

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

export interface ServiceHandle {
  server: ChildServer;
  url: string;
  adminKey: string;
  dataDir: string;
}

/**
 * Starts the real built service (`node <serviceDir>/main.js`) as a child process: its own DATA_DIR, a
 * free PORT, a fresh ADMIN_API_KEY and the given DATABASE_URL. Ready when `GET /health/ready` is 200
 * (migrations have run and the database answers).
 */
export async function startService(options: {
  serviceDir: string;
  databaseUrl: string;
  runDir: string;
  repoRoot: string;
  extraEnv?: Record<string, string>;
  /** Node flags for the service process, e.g. `--cpu-prof` (bench --profile). */
  nodeArgs?: string[];
}): Promise<ServiceHandle> {
  const dataDir = join(options.runDir, 'service-data');
  await mkdir(dataDir, { recursive: true });
  const port = await freePort();
  // Metrics on, as in production, on a port of its own run (the default one may be taken on this machine).
  const metricsPort = await freePort();
  const adminKey = randomBytes(32).toString('base64url');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_API_KEY: adminKey,
    DATABASE_URL: options.databaseUrl,
    METRICS_PORT: String(metricsPort),
    ...serviceSettingsEnv(),
    ...options.extraEnv,
  };
  const server = spawnNode('service', join(options.serviceDir, 'main.js'), [], env, join(options.runDir, 'service.log'), options.repoRoot, options.nodeArgs);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(server, `${url}/health/ready`, 120_000);
  } catch (error) {
    await server.stop(2000);
    throw error;
  }
  server.url = url;
  return { server, url, adminKey, dataDir };
}
