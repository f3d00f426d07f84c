import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * Schema patterns run on a linear-time engine. With JavaScript's backtracking engine `^(a+)+$` against a run
 * of "a" and a "!" takes time that doubles with each "a", holding the event loop: measured on the old engine,
 * 32 of them took 152 s in a `pattern` (checked twice: decision and report) and `^(b+)+$` against 32 "b" 16 s
 * as a property name; the sizes below make both run far into the Jest timeout there.
 */
const hostile = (letter: string, count: number) => `${letter.repeat(count)}!`;

describe('schema patterns', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    const schema = {
      schemaID: 'redos',
      type: 'object',
      properties: {
        context: {
          type: 'object',
          properties: { name: { type: 'string', pattern: '^(a+)+$' }, accent: { type: 'string', pattern: '^\\u00e9+$' } },
          patternProperties: { '^(b+)+$': { type: 'integer' } },
        },
      },
    };
    expect((await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send(schema)).status).toBe(201);
    const collection = await t.http().post('/intel/collections').set('X-Api-Key', t.adminKey).send({ name: 'redos', schemaID: 'redos' });
    expect(collection.status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  const add = (context: Record<string, unknown>) =>
    t
      .http()
      .post('/intel/collections/redos/objects')
      .set('X-Api-Key', t.adminKey)
      .send({ type: 'DomainName', keys: [{ type: 'DomainName', value: 'a.example' }], context });

  it('checks a catastrophic `pattern` against a hostile value without backtracking', async () => {
    const response = await add({ name: hostile('a', 32) });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: 'SchemaCheckFail', details: { InstanceLocation: '/context/name' } });
    expect((await add({ name: 'aaaa' })).status).toBe(204);
  });

  it('checks a catastrophic `patternProperties` against a hostile attribute name without backtracking', async () => {
    expect((await add({ [hostile('b', 36)]: 'not checked: the name does not match' })).status).toBe(204);
    expect((await add({ bbb: 'x' })).body).toMatchObject({ code: 'SchemaCheckFail', details: { InstanceLocation: '/context/bbb' } });
  });

  it('keeps JavaScript pattern syntax working (\\u escapes)', async () => {
    expect((await add({ accent: 'ééé' })).status).toBe(204);
    expect((await add({ accent: 'e' })).body.code).toBe('SchemaCheckFail');
  });

  it.each([
    ['/intel/schemas', 'a backreference', { pattern: '^(a)\\1$' }],
    ['/intel/schemas', 'a lookahead', { pattern: '^(?=a)a$' }],
    ['/insight/schemas', 'a lookbehind in patternProperties', { patternProperties: { '(?<=a)b': {} } }],
    ['/insight/schemas', 'a negative lookahead deep inside', { properties: { context: { properties: { x: { pattern: '^(?!x)' } } } } }],
  ])('POST %s refuses %s with 400 InvalidData and stores nothing', async (path, _name, extra) => {
    const response = await t
      .http()
      .post(path)
      .set('X-Api-Key', t.adminKey)
      .send({ schemaID: 'unsafe', type: 'object', ...extra });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('InvalidData');
    expect(response.body.message).toMatch(/is not supported: schema patterns run on a linear-time engine/);
    expect((await t.http().get(`${path}/unsafe`).set('X-Api-Key', t.adminKey)).status).toBe(404);
  });

  it('refuses an unsupported pattern in a replacement too, keeping the old version', async () => {
    const response = await t
      .http()
      .put('/intel/schemas/redos')
      .set('X-Api-Key', t.adminKey)
      .set('If-Match', '"1"')
      .send({ schemaID: 'redos', type: 'object', properties: { context: { properties: { name: { pattern: '(a)\\1' } } } } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('InvalidData');
    const current = await t.http().get('/intel/schemas/redos').set('X-Api-Key', t.adminKey);
    expect(current.headers.etag).toBe('"1"');
  });
});
