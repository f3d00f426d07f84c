import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createKey, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { VERDICT_SCHEMA } from './insight-support.js';

/** The registry itself is tested through /intel/schemas; this checks insight's routes, namespace and permissions. */
describe('insight schemas (/insight/schemas)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('registers, views, replaces and lists in the insight namespace', async () => {
    const created = await t.http().post('/insight/schemas').set('X-Api-Key', t.adminKey).send(VERDICT_SCHEMA);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ schemaID: 'verdict' });

    const duplicate = await t.http().post('/insight/schemas').set('X-Api-Key', t.adminKey).send(VERDICT_SCHEMA);
    expect([duplicate.status, duplicate.body.code]).toEqual([409, 'DuplicateSchema']);

    const viewed = await t.http().get('/insight/schemas/verdict').set('X-Api-Key', t.adminKey);
    expect(viewed.status).toBe(200);
    expect(viewed.body).toEqual(VERDICT_SCHEMA);
    expect(viewed.headers.etag).toBe('"1"');

    const changed = { ...VERDICT_SCHEMA, title: 'Verdict v2' };
    const stale = await t.http().put('/insight/schemas/verdict').set('X-Api-Key', t.adminKey).set('If-Match', '"0"').send(changed);
    expect([stale.status, stale.body.code]).toEqual([412, 'ResourceModified']);
    const renamed = await t
      .http()
      .put('/insight/schemas/verdict')
      .set('X-Api-Key', t.adminKey)
      .set('If-Match', '"1"')
      .send({ ...changed, schemaID: 'other' });
    expect([renamed.status, renamed.body.code]).toEqual([422, 'InvalidSchemaID']);
    const replaced = await t.http().put('/insight/schemas/verdict').set('X-Api-Key', t.adminKey).set('If-Match', '"1"').send(changed);
    expect(replaced.status).toBe(204);
    const after = await t.http().get('/insight/schemas/verdict').set('X-Api-Key', t.adminKey);
    expect([after.headers.etag, after.body]).toEqual(['"2"', changed]);
    expect((await t.http().get('/insight/schemas/verdict').set('X-Api-Key', t.adminKey).set('If-None-Match', '"2"')).status).toBe(304);
    // The SDK's retried PUT: same document, old tag → 204, the tag stays.
    const replayed = await t.http().put('/insight/schemas/verdict').set('X-Api-Key', t.adminKey).set('If-Match', '"1"').send(changed);
    expect(replayed.status).toBe(204);
    expect((await t.http().get('/insight/schemas/verdict').set('X-Api-Key', t.adminKey)).headers.etag).toBe('"2"');

    await t.http().post('/insight/schemas').set('X-Api-Key', t.adminKey).send({ schemaID: 'another', type: 'object' }).expect(201);
    const page = await t.http().get('/insight/schemas?limit=1').set('X-Api-Key', t.adminKey);
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(1);
    const next = await t.http().get(parseLinks(page.headers.link).next).set('X-Api-Key', t.adminKey);
    expect([...page.body, ...next.body].sort((a, b) => a.schemaID.localeCompare(b.schemaID))).toEqual([
      { schemaID: 'another', title: '' },
      { schemaID: 'verdict', title: 'Verdict v2' },
    ]);
  });

  it('does not see intel schemas, nor intel theirs', async () => {
    await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send({ schemaID: 'intel-side', type: 'object' }).expect(201);
    const insightView = await t.http().get('/insight/schemas/intel-side').set('X-Api-Key', t.adminKey);
    expect([insightView.status, insightView.body.code]).toEqual([404, 'NotFound']);
    const intelView = await t.http().get('/intel/schemas/verdict').set('X-Api-Key', t.adminKey);
    expect([intelView.status, intelView.body.code]).toEqual([404, 'NotFound']);
    // The same id may exist in both namespaces.
    const same = await t.http().post('/insight/schemas').set('X-Api-Key', t.adminKey).send({ schemaID: 'intel-side', type: 'object' });
    expect(same.status).toBe(201);
  });

  it('refuses an invalid document with 400 InvalidData', async () => {
    for (const body of [{ type: 'object' }, { schemaID: 'bad id!', type: 'object' }, { schemaID: 'x', type: 12 }]) {
      const response = await t.http().post('/insight/schemas').set('X-Api-Key', t.adminKey).send(body);
      expect({ body, status: response.status, code: response.body.code }).toEqual({ body, status: 400, code: 'InvalidData' });
    }
  });

  it('requires Read / Write on insight, not on intel', async () => {
    const intelWriter = await createKey(t, { permissions: [{ resource: 2, actions: ['Read', 'Write'] }] });
    const insightReader = await createKey(t, { permissions: [{ resource: 3, actions: ['Read'] }] });
    const write = await t.http().post('/insight/schemas').set('X-Api-Key', intelWriter.key).send({ schemaID: 'nope', type: 'object' });
    expect([write.status, write.body.code]).toEqual([403, 'MissingPermissions']);
    const read = await t.http().get('/insight/schemas/verdict').set('X-Api-Key', intelWriter.key);
    expect([read.status, read.body.code]).toEqual([403, 'MissingPermissions']);
    const readerWrite = await t.http().post('/insight/schemas').set('X-Api-Key', insightReader.key).send({ schemaID: 'nope', type: 'object' });
    expect([readerWrite.status, readerWrite.body.code]).toEqual([403, 'MissingPermissions']);
    expect((await t.http().get('/insight/schemas').set('X-Api-Key', insightReader.key)).status).toBe(200);
  });
});
