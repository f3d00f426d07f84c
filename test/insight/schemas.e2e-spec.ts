import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/insight.js';
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
    const created = await t.insight.createSchema(VERDICT_SCHEMA);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ schemaID: 'verdict' });

    const duplicate = await t.insight.createSchema(VERDICT_SCHEMA);
    expectError(duplicate, 'DuplicateSchema');

    const viewed = await t.insight.schema('verdict');
    expect(viewed.status).toBe(200);
    expect(viewed.body).toEqual(VERDICT_SCHEMA);
    expect(viewed.headers.etag).toBe('"1"');

    const changed = { ...VERDICT_SCHEMA, title: 'Verdict v2' };
    const stale = await t.insight.replaceSchema('verdict', changed, '"0"');
    expectError(stale, 'ResourceModified');
    const renamed = await t.insight.replaceSchema('verdict', { ...changed, schemaID: 'other' }, '"1"');
    expectError(renamed, 'InvalidSchemaID');
    const replaced = await t.insight.replaceSchema('verdict', changed, '"1"');
    expect(replaced.status).toBe(204);
    const after = await t.insight.schema('verdict');
    expect([after.headers.etag, after.body]).toEqual(['"2"', changed]);
    expect((await t.insight.schema('verdict').set('If-None-Match', '"2"')).status).toBe(304);
    // The SDK's retried PUT: same document, old tag → 204, the tag stays.
    const replayed = await t.insight.replaceSchema('verdict', changed, '"1"');
    expect(replayed.status).toBe(204);
    expect((await t.insight.schema('verdict')).headers.etag).toBe('"2"');

    await t.insight.createSchema({ schemaID: 'another', type: 'object' }).expect(201);
    const page = await t.insight.schemas('?limit=1');
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(1);
    const next = await t.insight.get(parseLinks(page.headers.link).next);
    expect([...page.body, ...next.body].sort((a, b) => a.schemaID.localeCompare(b.schemaID))).toEqual([
      { schemaID: 'another', title: '' },
      { schemaID: 'verdict', title: 'Verdict v2' },
    ]);
  });

  it('does not see intel schemas, nor intel theirs', async () => {
    await t.intel.createSchema({ schemaID: 'intel-side', type: 'object' }).expect(201);
    const insightView = await t.insight.schema('intel-side');
    expectError(insightView, 'NotFound');
    const intelView = await t.intel.schema('verdict');
    expectError(intelView, 'NotFound');
    // The same id may exist in both namespaces.
    const same = await t.insight.createSchema({ schemaID: 'intel-side', type: 'object' });
    expect(same.status).toBe(201);
  });

  it('refuses an invalid document with 400 InvalidData', async () => {
    for (const body of [{ type: 'object' }, { schemaID: 'bad id!', type: 'object' }, { schemaID: 'x', type: 12 }]) {
      const response = await t.insight.createSchema(body);
      expect({ body, status: response.status, code: response.body.code }).toEqual({ body, status: 400, code: 'InvalidData' });
    }
  });

  it('requires Read / Write on insight, not on intel', async () => {
    const intelWriter = await createKey(t, { permissions: [{ resource: 2, actions: ['Read', 'Write'] }] });
    const insightReader = await createKey(t, { permissions: [{ resource: 3, actions: ['Read'] }] });
    const write = await t.insight.as(intelWriter.key).createSchema({ schemaID: 'nope', type: 'object' });
    expectError(write, 'MissingPermissions');
    const read = await t.insight.as(intelWriter.key).schema('verdict');
    expectError(read, 'MissingPermissions');
    const readerWrite = await t.insight.as(insightReader.key).createSchema({ schemaID: 'nope', type: 'object' });
    expectError(readerWrite, 'MissingPermissions');
    expect((await t.insight.as(insightReader.key).schemas()).status).toBe(200);
  });
});
