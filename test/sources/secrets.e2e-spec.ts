import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sizeSchema } from '../intel/objects.helpers.js';
import { eventually } from '../support/eventually.js';
import { dataDir, startService, type RunningService } from '../support/processes.js';
import { createDatabase } from '../support/test-app.js';
import { FeedServer } from './feed-server.js';

const SECRET = `header-secret-${randomBytes(8).toString('hex')}`;
const PASSWORD = `password-secret-${randomBytes(8).toString('hex')}`;

/** A source's secrets never reach a log line of the real process, at the most verbose level, runs failing included. */
describe('source secrets in logs', () => {
  let service: RunningService;
  let directory: string;
  let feed: FeedServer;
  const adminKey = randomBytes(24).toString('base64url');

  beforeAll(async () => {
    directory = await dataDir();
    feed = await new FeedServer().start();
    service = await startService({
      DATABASE_URL: await createDatabase({ migrated: true }),
      ADMIN_API_KEY: adminKey,
      DATA_DIR: directory,
      LOG_LEVEL: 'trace',
      SOURCE_POLL_SECONDS: '3600',
    });
  });
  afterAll(async () => {
    await service?.stop();
    await feed.stop();
    await rm(directory, { recursive: true, force: true });
  });

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${service.url}${path}`, {
      method,
      headers: { 'X-Api-Key': adminKey, 'Content-Type': 'application/json', ...headers },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });

  it('sends the secrets to the feed, and logs none of them', async () => {
    feed.list('/ok.txt', '198.51.100.1\n');
    feed.routes.set('/fails.txt', { status: 500, body: 'down' });
    expect((await call('POST', '/intel/schemas', sizeSchema('logs-schema'))).status).toBe(201);
    expect((await call('POST', '/intel/collections', { name: 'logs', schemaID: 'logs-schema' })).status).toBe(201);
    const form = { collection: 'logs', kind: 'text', headers: { 'Auth-Key': SECRET }, basicAuth: { username: 'team', password: PASSWORD } };
    expect((await call('POST', '/intel/sources', { ...form, name: 'ok', url: feed.url('/ok.txt') })).status).toBe(201);
    expect((await call('POST', '/intel/sources', { ...form, name: 'fails', url: feed.url('/fails.txt') })).status).toBe(201);
    expect((await call('PATCH', '/intel/sources/ok', { headers: { 'Auth-Key': SECRET } }, { 'If-Match': '"1"' })).status).toBe(204);
    for (const name of ['ok', 'fails']) {
      expect((await call('POST', `/intel/sources/${name}/runs`)).status).toBe(202);
      await eventually(
        async () => ((await (await call('GET', `/intel/sources/${name}/runs`)).json()) as { finishedAt: string | null }[])[0]?.finishedAt != null,
      );
    }
    const sent = feed.requests.find((request) => request.path === '/ok.txt')!;
    expect(sent.headers['auth-key']).toBe(SECRET);
    expect(sent.headers.authorization).toBe(`Basic ${Buffer.from(`team:${PASSWORD}`).toString('base64')}`);
    const output = service.output.stdout + service.output.stderr;
    expect(output).toMatch(/fails/);
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain(PASSWORD);
    expect(output).not.toContain(Buffer.from(`team:${PASSWORD}`).toString('base64'));
  });
});
