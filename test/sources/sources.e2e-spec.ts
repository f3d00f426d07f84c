import { beforeAll, describe, expect, it } from '@jest/globals';
import { BUILTIN_RESOURCES } from '../../src/common/guard/access.js';
import { createCollection } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import type { FeedServer } from './feed-server.js';
import { withSourceApp } from './sources.helpers.js';

const SECRET = 'auth-key-value-that-must-never-show';
const PASSWORD = 'basic-password-that-must-never-show';

/** `/intel/sources` as a resource (extensions §13): forms, tags, secrets, permissions. */
describe('/intel/sources', () => {
  let t: TestApp;
  let feed: FeedServer;

  // The schedule is driven by the tests (SourceRunsService.runDue), never by the timer.
  withSourceApp((app) => ({ t, feed } = app));
  beforeAll(async () => {
    feed.list('/list.txt', '198.51.100.1\n');
    await createCollection(t, 'crud-a');
    await createCollection(t, 'crud-b');
  });

  const form = (name: string, extra: Record<string, unknown> = {}) => ({ name, collection: 'crud-a', kind: 'text', url: feed.url('/list.txt'), ...extra });
  const create = (body: unknown) => t.sources.create(body as object);
  const get = (name: string, key = t.adminKey) => t.sources.as(key).source(name);
  const patch = (name: string, body: unknown, tag?: string) => t.sources.update(name, body as object, tag);

  it('creates a source (201 {name}) with the defaults, shown without its secrets; a second of the name is 409 DuplicateSource', async () => {
    const created = await create(form('urlhaus', { headers: { 'Auth-Key': SECRET }, basicAuth: { username: 'team', password: PASSWORD } }));
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'urlhaus' });
    const view = await get('urlhaus');
    expect(view.status).toBe(200);
    expect(view.headers.etag).toBe('"1"');
    expect(view.body).toMatchObject({
      name: 'urlhaus',
      collection: 'crud-a',
      kind: 'text',
      enabled: true,
      intervalSeconds: 3600,
      mode: 'snapshot',
      removal: { policy: 'remove' },
      context: {},
      headers: ['Auth-Key'],
      basicAuth: { username: 'team' },
      maxRemovalRatio: 0.5,
      minItems: 1,
      state: 'ok',
      lastRunAt: null,
      consecutiveFailures: 0,
      claims: 0,
    });
    expect(JSON.stringify(view.body)).not.toContain(SECRET);
    expect(JSON.stringify(view.body)).not.toContain(PASSWORD);
    expectError(await create(form('urlhaus')), 'DuplicateSource');
  });

  it('refuses a bad form with 400 InvalidData naming the member, an unknown collection with 422 CollectionNotFound', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [form('Upper'), 'name'],
      [form('x', { url: 'ftp://feed.example/list' }), 'url'],
      [form('x', { url: 'http://user:pw@feed.example/list' }), 'url'],
      [form('x', { url: 'http://169.254.169.254/latest/meta-data' }), 'url'],
      [form('x', { intervalSeconds: 30 }), 'intervalSeconds'],
      [form('x', { removal: { policy: 'afterMissedRuns' } }), 'removal.runs'],
      [form('x', { maxRemovalRatio: 2 }), 'maxRemovalRatio'],
      [form('x', { valueColumn: 'ioc' }), 'valueColumn'],
      [form('x', { kind: 'csv' }), 'valueColumn'],
      [form('x', { kind: 'rss' }), 'kind'],
      [form('x', { headers: { 'Bad Header': 'v' } }), 'headers.Bad Header'],
      [form('x', { context: [1] }), 'context'],
      [{ collection: 'crud-a', kind: 'text', url: feed.url('/l') }, 'name'],
    ];
    for (const [body, field] of bad) {
      const response = await create(body);
      expectError(response, 'InvalidData');
      expect(response.body.details).toEqual({ field });
    }
    expectError(await create(form('nowhere', { collection: 'no-such-collection' })), 'CollectionNotFound');
  });

  it('PATCH needs the tag (400 without, 412 stale), keeps an omitted secret, clears one set to null', async () => {
    expect((await create(form('patched', { headers: { 'Auth-Key': SECRET } }))).status).toBe(201);
    expectError(await patch('patched', { intervalSeconds: 600 }), 'BadRequest');
    expectError(await patch('patched', { intervalSeconds: 600 }, '"7"'), 'ResourceModified');
    expect((await patch('patched', { intervalSeconds: 600 }, '"1"')).status).toBe(204);
    const view = await get('patched');
    expect(view.headers.etag).toBe('"2"');
    expect(view.body).toMatchObject({ intervalSeconds: 600, headers: ['Auth-Key'] });
    // The same values again change nothing and keep the tag.
    expect((await patch('patched', { intervalSeconds: 600 }, '"2"')).status).toBe(204);
    expect((await get('patched')).headers.etag).toBe('"2"');
    expectError(await patch('patched', { collection: 'crud-b' }, '"2"'), 'InvalidData');
    expect((await patch('patched', { headers: null }, '"2"')).status).toBe(204);
    expect((await get('patched')).body.headers).toEqual([]);
    const stored = await t.db.query(`SELECT secrets FROM sources_source WHERE name = 'patched'`);
    expect(stored.rows[0].secrets).toEqual({ headers: {} });
  });

  it('secrets are never in an audit entry', async () => {
    expect((await create(form('audited', { headers: { 'Auth-Key': SECRET }, basicAuth: { username: 'u', password: PASSWORD } }))).status).toBe(201);
    expect((await patch('audited', { headers: { 'Auth-Key': SECRET } }, '"1"')).status).toBe(204);
    const rows = JSON.stringify((await t.db.query('SELECT * FROM audit_entry')).rows);
    expect(rows).toContain('audited');
    expect(rows).not.toContain(SECRET);
    expect(rows).not.toContain(PASSWORD);
  });

  it('reading needs Read on the collection: the list shows only those sources, a view of another is 403; managing needs Write on intel', async () => {
    expect((await create(form('in-b', { collection: 'crud-b' }))).status).toBe(201);
    const collections = await t.db.query(`SELECT name, resource_id FROM intel_collection WHERE name IN ('crud-a', 'crud-b')`);
    const resourceOf = (name: string) => collections.rows.find((row) => row.name === name).resource_id as number;
    const { key } = await createKey(t, { permissions: [{ resource: resourceOf('crud-b'), actions: ['Read'] }] });
    const list = await t.sources.as(key).sources();
    expect(list.status).toBe(200);
    expect(list.body.map((source: { name: string }) => source.name)).toEqual(['in-b']);
    expect((await get('in-b', key)).status).toBe(200);
    expectError(await get('urlhaus', key), 'MissingPermissions');
    expectError(await t.sources.as(key).create(form('mine')), 'MissingPermissions');
    expectError(await t.sources.as(key).start('in-b'), 'MissingPermissions');
    const all = await t.sources.sources('?limit=2');
    expect(all.body).toHaveLength(2);
    expect(all.headers.link).toMatch(/rel="next"/);
    const { key: writer } = await createKey(t, { permissions: [{ resource: BUILTIN_RESOURCES.intel.id, actions: ['Write'] }] });
    expect((await t.sources.as(writer).dryRun('in-b')).status).toBe(200);
  });

  it('DELETE answers 204, then the source is gone (404)', async () => {
    expect((await create(form('deleted'))).status).toBe(201);
    expect((await t.sources.remove('deleted')).status).toBe(204);
    expectError(await get('deleted'), 'NotFound');
    expectError(await t.sources.remove('deleted'), 'NotFound');
  });
});
