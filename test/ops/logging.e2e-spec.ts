import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { dataDir, startService, type RunningService } from '../support/processes.js';
import { createDatabase } from '../support/test-app.js';

/** The JSON lines of a log output (every line must be one). */
function logLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The real process's stdout: what a log pipeline reads. */
describe('request logs (LOG_LEVEL=info, JSON lines)', () => {
  let service: RunningService;
  let directory: string;
  let databaseUrl: string;
  const adminKey = randomBytes(24).toString('base64url');
  const secrets: string[] = [adminKey];
  const stdout = () => service.output.stdout;

  beforeAll(async () => {
    directory = await dataDir();
    databaseUrl = await createDatabase({ migrated: true });
    service = await startService({ DATABASE_URL: databaseUrl, ADMIN_API_KEY: adminKey, DATA_DIR: directory, LOG_LEVEL: 'info' });
  });

  afterAll(async () => {
    await service?.stop();
    await rm(directory, { recursive: true, force: true });
  });

  const call = (path: string, init: RequestInit = {}) => fetch(`${service.url}${path}`, init);

  /** The request line of `requestId`, once the asynchronous log writer has flushed it. */
  async function lineOf(requestId: string): Promise<Record<string, unknown>> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const line = logLines(stdout()).find((entry) => entry.requestId === requestId && 'status' in entry);
      if (line) return line;
      await sleep(50);
    }
    throw new Error(`no request line for ${requestId} in:\n${stdout().slice(-3000)}`);
  }

  it('writes one line per request: time, level, request id, method, route template, path, status, duration, key id', async () => {
    const created = await call('/auth/keys', {
      method: 'POST',
      headers: { 'X-Api-Key': adminKey, 'Content-Type': 'application/json', 'X-Request-Id': 'create-key-1' },
      body: JSON.stringify({ permissions: [{ resource: { id: 2 }, actions: ['ReadChildren'] }], description: 'body-marker-4f1c' }),
    });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { id: number; key: string };
    secrets.push(key.key, 'body-marker-4f1c');
    const issued = await call('/auth/token', { headers: { 'X-Api-Key': key.key } });
    const { accessToken } = (await issued.json()) as { accessToken: string };
    secrets.push(accessToken);

    const listed = await call('/intel/collections/no-such-one', {
      headers: { Authorization: `Bearer ${accessToken}`, 'X-Request-Id': 'trace-abc-1' },
    });
    expect(listed.status).toBe(404);
    expect(listed.headers.get('x-request-id')).toBe('trace-abc-1');
    const line = await lineOf('trace-abc-1');
    expect(line).toMatchObject({
      level: 'info',
      requestId: 'trace-abc-1',
      method: 'GET',
      route: '/intel/collections/:collectionName',
      path: '/intel/collections/no-such-one',
      status: 404,
      keyId: key.id,
    });
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
    expect(typeof line.durationMs).toBe('number');
    expect(await lineOf('create-key-1')).toMatchObject({ method: 'POST', route: '/auth/keys', status: 201 });
  });

  it('generates a request id when none (or an unsafe one) is given, and echoes what it used', async () => {
    const cases: [string | undefined, boolean][] = [
      [undefined, false],
      ['a'.repeat(128), true],
      ['a'.repeat(129), false],
      ['tab\there', false],
      ['caf\u00e9', false],
    ];
    for (const [given, kept] of cases) {
      const headers = new Headers();
      if (given !== undefined) headers.set('X-Request-Id', given);
      const response = await call('/health/live', { headers });
      const echoed = response.headers.get('x-request-id')!;
      if (kept) expect(echoed).toBe(given);
      else expect(echoed).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect((await lineOf(echoed)).route).toBe('/health/live');
    }
    expect(stdout()).not.toContain('a'.repeat(129));
  });

  it('logs an unexpected failure at error level with the request id, on the error line and the request line', async () => {
    // A real fault in our own database: the task table is gone for the length of one request.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    await db.query('ALTER TABLE insight_task RENAME TO insight_task_away');
    let status: number;
    try {
      status = (await call(`/insight/tasks/${randomUUID()}`, { headers: { 'X-Api-Key': adminKey, 'X-Request-Id': 'broken-1' } })).status;
    } finally {
      await db.query('ALTER TABLE insight_task_away RENAME TO insight_task');
      await db.end();
    }
    expect(status).toBe(500);
    expect(await lineOf('broken-1')).toMatchObject({ level: 'error', status: 500, route: '/insight/tasks/:task_id' });
    const errorLine = logLines(stdout()).find((entry) => entry.requestId === 'broken-1' && 'err' in entry);
    expect(errorLine).toMatchObject({ level: 'error', msg: 'GET /insight/tasks/:task_id failed' });
    expect(JSON.stringify(errorLine)).toContain('insight_task');
  });

  it('never writes a key, token, Authorization or X-Api-Key header, or a body to the log', async () => {
    const wrongKey = `wrong-key-${randomUUID()}`;
    secrets.push(wrongKey);
    expect((await call('/intel/collections', { headers: { 'X-Api-Key': wrongKey } })).status).toBe(401);
    expect((await call('/intel/collections', { headers: { Authorization: `Bearer ${wrongKey}` } })).status).toBe(401);
    // Stopping flushes everything the process had to write.
    const { code } = await service.stop();
    expect(code).toBe(0);
    const output = service.output.stdout + service.output.stderr;
    expect(secrets.filter((secret) => output.includes(secret))).toEqual([]);
    expect(output).not.toMatch(/authorization|x-api-key|bearer/i);
    // Every stdout line is JSON: nothing unstructured slipped in.
    expect(logLines(stdout()).length).toBeGreaterThan(10);
  });
});
