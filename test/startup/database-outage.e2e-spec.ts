import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EmbeddedDatabase } from '../../src/database/embedded-postgres.js';
import { dataDir, freePort, startService, type RunningService } from '../support/processes.js';

/**
 * A database outage while the service runs, with a PostgreSQL of its own (the run's shared cluster must stay
 * up): stopped, requests get 503 with Retry-After instead of 500 or a hang; started again on the same port,
 * the same service process answers normally.
 */
describe('a database outage while the service runs', () => {
  let directory: string;
  let port: number;
  let database: EmbeddedDatabase | undefined;
  let service: RunningService;
  const adminKey = randomBytes(24).toString('base64url');

  beforeAll(async () => {
    directory = await dataDir();
    port = await freePort();
    database = await EmbeddedDatabase.start(join(directory, 'pg'), { ephemeral: true, port });
    service = await startService({ DATABASE_URL: database.url, ADMIN_API_KEY: adminKey, DATA_DIR: join(directory, 'data') });
  });

  afterAll(async () => {
    await service?.stop();
    await database?.stop();
    await rm(directory, { recursive: true, force: true });
  });

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${service.url}${path}`, {
      method,
      headers: { 'X-Api-Key': adminKey, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const newKey = { permissions: [{ resource: { id: 2 }, actions: ['Read'] }] };

  it('answers 503 ServiceUnavailable with Retry-After while PostgreSQL is stopped, and recovers without a restart', async () => {
    expect((await call('GET', '/auth/keys')).status).toBe(200);
    expect((await call('POST', '/auth/keys', newKey)).status).toBe(201);

    await database!.stop();
    database = undefined;
    // More concurrent requests than the pool has connections: none may hang or answer 500.
    const during = await Promise.all([
      ...Array.from({ length: 30 }, () => call('GET', '/auth/keys')),
      call('POST', '/auth/keys', newKey),
      call('GET', '/intel/collections'),
    ]);
    for (const response of during) {
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toEqual({ code: 'ServiceUnavailable', message: expect.any(String) });
    }
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(503);

    database = await EmbeddedDatabase.start(join(directory, 'pg'), { ephemeral: true, port });
    // Functional waiting for the pool and the LISTEN connection to come back (never a timing assertion).
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
      status = (await call('GET', '/auth/keys')).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(200);
    expect((await call('POST', '/auth/keys', newKey)).status).toBe(201);
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
    // The same process throughout.
    expect(service.process.exitCode).toBeNull();
  });
});
