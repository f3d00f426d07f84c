import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('resources (GET /auth/resources)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const list = (query = '', key = t.adminKey) => t.http().get(`/auth/resources${query}`).set('X-Api-Key', key);

  it('without parentID lists the top-level built-in resources, without a parent field', async () => {
    const response = await list();
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { id: 1, name: 'auth' },
      { id: 2, name: 'intel' },
      { id: 3, name: 'insight' },
      { id: 4, name: 'filebox' },
    ]);
    expect(response.headers.link).toBeUndefined();
  });

  it('with parentID lists the direct children, each with parent {id}', async () => {
    const response = await list('?parentID=3');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { id: 5, name: 'tasks', parent: { id: 3 } },
      { id: 6, name: 'task-queue', parent: { id: 3 } },
    ]);
    const leaf = await list('?parentID=5');
    expect(leaf.status).toBe(200);
    expect(leaf.body).toEqual([]);
  });

  it('pages children and carries parentID and limit in the next link', async () => {
    const first = await list('?parentID=3&limit=1');
    expect(first.status).toBe(200);
    expect(first.body).toEqual([{ id: 5, name: 'tasks', parent: { id: 3 } }]);
    const next = parseLinks(first.headers.link).next;
    expect(next).toMatch(/^\/auth\/resources\?/);
    const nextUrl = new URL(next, 'http://x');
    expect(nextUrl.searchParams.get('parentID')).toBe('3');
    expect(nextUrl.searchParams.get('limit')).toBe('1');
    expect(cursorOf(next)).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await t.http().get(next).set('X-Api-Key', t.adminKey);
    expect(second.status).toBe(200);
    expect(second.body).toEqual([{ id: 6, name: 'task-queue', parent: { id: 3 } }]);
    expect(parseLinks(second.headers.link).next).toBeUndefined();
  });

  it("lists a child resource added under intel (a collection's resource)", async () => {
    const { rows } = await t.db.query(`INSERT INTO auth_resource (name, parent_id) VALUES ('some-collection', 2) RETURNING id`);
    const response = await list('?parentID=2');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([{ id: rows[0].id, name: 'some-collection', parent: { id: 2 } }]);
  });

  it('an unknown parentID → 422 ResourceNotFound', async () => {
    expectError(await list('?parentID=999999'), 'ResourceNotFound');
    expectError(await list('?parentID=9999999999'), 'ResourceNotFound');
  });

  it.each(['abc', '0', '-1', '1.5', '', '1&parentID=2', '%20'])('a malformed parentID %p → 400 InvalidQueryArgument', async (value) => {
    expectError(await list(`?parentID=${value}`), 'InvalidQueryArgument');
  });

  it('the spec name parent_id is not the wire name → 400 InvalidQueryArgument', async () => {
    expectError(await list('?parent_id=3'), 'InvalidQueryArgument');
  });

  it('needs Read on auth: 403 MissingPermissions otherwise, 401 without credentials', async () => {
    const other = await createKey(t, { permissions: [{ resource: 1, actions: ['Write'] }] });
    expectError(await list('', other.key), 'MissingPermissions');
    expectError(await t.http().get('/auth/resources'), 'Unauthorized');
    const reader = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
    expect((await list('?parentID=3', reader.key)).status).toBe(200);
  });
});
