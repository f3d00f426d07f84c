import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * PostgreSQL text and jsonb cannot hold U+0000 (and jsonb no unpaired surrogate): every such value in a body,
 * query or path is refused by the one validation pipe with a 4xx, never reaching SQL as a 500.
 */
describe('text the database cannot store', () => {
  let t: TestApp;
  const counts = async () =>
    (
      await t.db.query(
        `SELECT (SELECT count(*) FROM auth_api_key)::int AS keys, (SELECT count(*) FROM intel_object)::int AS objects,
                (SELECT count(*) FROM insight_task)::int AS tasks`,
      )
    ).rows[0];

  beforeAll(async () => {
    t = await createTestApp();
    for (const [path, body] of [
      ['/intel/schemas', { schemaID: 'any', type: 'object' }],
      ['/intel/collections', { name: 'nul', schemaID: 'any' }],
      ['/insight/schemas', { schemaID: 'verdict', type: 'object' }],
    ] as const) {
      expect((await t.http().post(path).set('X-Api-Key', t.adminKey).send(body)).status).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['POST', '/auth/keys', { permissions: [], description: '\u0000' }, '/description'],
    ['POST', '/auth/keys', { permissions: [], description: 'half \ud800 a pair' }, '/description'],
    ['POST', '/intel/collections/nul/objects', { type: 'URL', keys: [{ type: 'URL', value: 'http://a.example/\u0000' }] }, '/keys/0/value'],
    [
      'POST',
      '/intel/collections/nul/objects',
      { type: 'DomainName', keys: [{ type: 'DomainName', value: 'a.example' }], context: { 'k\u0000': 1 } },
      '/context/k\u0000',
    ],
    [
      'POST',
      '/insight/tasks',
      { params: { schemaID: 'verdict', objectKeys: [{ type: 'URL', value: 'http://b.example/\u0000' }] } },
      '/params/objectKeys/0/value',
    ],
    ['PATCH', '/intel/collections/nul', { schemaID: 'any\u0000' }, '/schemaID'],
  ])('%s %s refuses U+0000 or a lone surrogate in the body with 400 InvalidData and stores nothing', async (method, path, body, pointer) => {
    const before = await counts();
    const response = await t.http()[method.toLowerCase() as 'post'](path).set('X-Api-Key', t.adminKey).set('If-Match', '"1"').send(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'InvalidData', details: { InstanceLocation: pointer } });
    expect(await counts()).toEqual(before);
  });

  it.each([
    ['GET', '/auth/keys?description=%00'],
    ['GET', '/auth/keys?description=a&description=%00'],
    ['DELETE', '/intel/collections/nul/objects?objectKeyType=URL&objectKey=http%3A%2F%2Fa.example%2F%00'],
    ['GET', '/intel/collections/nul/objects?cursor=%00'],
  ])('%s %s refuses U+0000 in the query with 400 InvalidQueryArgument', async (method, path) => {
    const response = await t.http()[method.toLowerCase() as 'get'](path).set('X-Api-Key', t.adminKey);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('InvalidQueryArgument');
  });

  it('refuses U+0000 in a path value with 400 InvalidPathArgument', async () => {
    const response = await t.http().get('/insight/tasks/%00').set('X-Api-Key', t.adminKey);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('InvalidPathArgument');
  });

  it('still stores text with characters around them, and free-form schema documents keep U+0000', async () => {
    const key = await t.http().post('/auth/keys').set('X-Api-Key', t.adminKey).send({ permissions: [], description: 'żółw 🐢 \\u0000' });
    expect(key.status).toBe(201);
    const schema = { schemaID: 'controls', type: 'object', properties: { name: { type: 'string', pattern: '^[^\u0000-\u001f]*$' } } };
    expect((await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send(schema)).status).toBe(201);
    const stored = await t.http().get('/intel/schemas/controls').set('X-Api-Key', t.adminKey);
    expect(stored.body.properties).toEqual(schema.properties);
  });
});
