import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { dataDir, startService, type RunningService } from '../support/processes.js';
import { createDatabase } from '../support/test-app.js';

/** The real process, so that its whole log output (stdout, stderr) can be searched too. */
describe('audit entries keep no secret, body or context', () => {
  let service: RunningService;
  let directory: string;
  let databaseUrl: string;
  const adminKey = randomBytes(24).toString('base64url');

  beforeAll(async () => {
    directory = await dataDir();
    databaseUrl = await createDatabase({ migrated: true });
    service = await startService({ DATABASE_URL: databaseUrl, ADMIN_API_KEY: adminKey, DATA_DIR: directory, LOG_LEVEL: 'info', AUDIT_READS: 'true' });
  });
  afterAll(async () => {
    await service?.stop();
    await rm(directory, { recursive: true, force: true });
  });

  const call = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${service.url}${path}`, { ...init, headers: { 'Content-Type': 'application/json', ...init.headers } });

  it('in the stored rows, the API output and the log output', async () => {
    const contextMarker = `context-marker-${randomBytes(6).toString('hex')}`;
    const descriptionMarker = `description-marker-${randomBytes(6).toString('hex')}`;
    const created = await call('/auth/keys', {
      method: 'POST',
      headers: { 'X-Api-Key': adminKey },
      body: JSON.stringify({
        permissions: [{ resource: { id: 2 }, actions: ['Read', 'Write', 'ReadChildren', 'WriteChildren'] }],
        description: descriptionMarker,
      }),
    });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { id: number; key: string };
    const token = ((await (await call('/auth/token', { headers: { 'X-Api-Key': key.key } })).json()) as { accessToken: string }).accessToken;
    const bearer = { Authorization: `Bearer ${token}` };
    expect((await call('/intel/schemas', { method: 'POST', headers: bearer, body: JSON.stringify({ schemaID: 'plain', type: 'object' }) })).status).toBe(201);
    expect((await call('/intel/collections', { method: 'POST', headers: bearer, body: JSON.stringify({ name: 'c1', schemaID: 'plain' }) })).status).toBe(201);
    const object = { type: 'DomainName', keys: [{ type: 'DomainName', value: 'secret-free.example' }], context: { note: contextMarker } };
    expect((await call('/intel/collections/c1/objects', { method: 'POST', headers: bearer, body: JSON.stringify(object) })).status).toBe(204);
    expect(
      (
        await call('/intel/collections/c1/objects', {
          method: 'POST',
          headers: { 'X-Api-Key': key.key },
          body: JSON.stringify({ ...object, context: { note: `${contextMarker}-2` } }),
        })
      ).status,
    ).toBe(204);
    // Refused, with the secrets in the request all the same.
    expect(
      (await call('/intel/collections/c1/objects', { method: 'POST', headers: { 'X-Api-Key': `${key.key}x` }, body: JSON.stringify(object) })).status,
    ).toBe(401);
    expect(
      (await call('/auth/keys', { method: 'POST', headers: bearer, body: JSON.stringify({ permissions: [], description: descriptionMarker }) })).status,
    ).toBe(403);
    expect((await call(`/intel/collections/c1/objects`, { headers: bearer })).status).toBe(200);

    const secrets = [key.key, token, token.split('.').at(-1)!, contextMarker, descriptionMarker, adminKey];
    const listed = await call('/auth/audit?limit=1000', { headers: { 'X-Api-Key': adminKey } });
    expect(listed.status).toBe(200);
    const output = await listed.text();
    expect((JSON.parse(output) as unknown[]).length).toBeGreaterThanOrEqual(9);
    expect(secrets.filter((secret) => output.includes(secret))).toEqual([]);

    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const rows = JSON.stringify((await db.query('SELECT * FROM audit_entry')).rows);
    await db.end();
    expect(rows).toContain('intel/c1');
    expect(secrets.filter((secret) => rows.includes(secret))).toEqual([]);

    const { code } = await service.stop();
    expect(code).toBe(0);
    const log = service.output.stdout + service.output.stderr;
    expect(log).toContain('"address":"127.0.0.1"');
    expect(secrets.filter((secret) => log.includes(secret))).toEqual([]);
  });
});
