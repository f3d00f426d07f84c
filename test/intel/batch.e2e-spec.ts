import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { followAll, freshCollections, hashKeys, listAll, md5, sha1 } from './objects.helpers.js';

const file = (keys: { type: string; value: string }[], context: Record<string, unknown> = {}) => ({ type: 'File', keys, context });
const domain = (value: string, context: Record<string, unknown> = {}) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context });

describe('POST /intel/collections/{collection_id}/objects/batch', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const freshCollection = freshCollections(() => t, 'batch');
  const batch = (c: string, items: unknown, query = '', key = t.adminKey) =>
    t
      .http()
      .post(`/intel/collections/${c}/objects/batch${query}`)
      .set('X-Api-Key', key)
      .send(items as object);
  const ndjson = (c: string, text: string, query = '') =>
    t.http().post(`/intel/collections/${c}/objects/batch${query}`).set('X-Api-Key', t.adminKey).set('Content-Type', 'application/x-ndjson').send(text);
  const single = (c: string, body: unknown) =>
    t
      .http()
      .post(`/intel/collections/${c}/objects`)
      .set('X-Api-Key', t.adminKey)
      .send(body as object);

  it('applies adds and removes in order with one change record each, numbered in item order', async () => {
    const c = await freshCollection();
    await single(c, file([{ type: 'MD5Hash', value: md5(9) }], { size: 9 })).expect(204);
    const before = await listAll(t, c, 100);
    const response = await batch(c, [
      file([{ type: 'MD5Hash', value: md5(1) }], { size: 1 }),
      domain('A.Example.', { size: 2 }),
      { remove: { type: 'MD5Hash', value: md5(9).toUpperCase() } },
      file(hashKeys(1), { size: 3 }),
      { remove: { type: 'DomainName', value: 'nowhere.example' } },
      domain('a.example', { size: 2 }),
    ]);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      added: 2,
      updated: 1,
      unchanged: 1,
      removed: 1,
      failed: 0,
      items: [
        { index: 0, status: 'Added' },
        { index: 1, status: 'Added' },
        { index: 2, status: 'Removed' },
        { index: 3, status: 'Updated' },
        { index: 4, status: 'Absent' },
        { index: 5, status: 'Unchanged' },
      ],
    });
    const merged = { type: 'File', keys: hashKeys(1), context: { size: 3 }, tlp: 'TLP:CLEAR' };
    const a = { type: 'DomainName', keys: [{ type: 'DomainName', value: 'a.example' }], context: { size: 2 }, tlp: 'TLP:CLEAR' };
    const { changes } = await followAll(t, c, before.changesCursor, 100);
    expect(changes).toEqual([
      { operation: 'Add', object: { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: { size: 1 }, tlp: 'TLP:CLEAR' } },
      { operation: 'Add', object: a },
      { operation: 'Remove', reason: 'Deleted', object: { type: 'File', keys: [{ type: 'MD5Hash', value: md5(9) }], context: { size: 9 }, tlp: 'TLP:CLEAR' } },
      { operation: 'Update', object: merged },
    ]);
    expect((await listAll(t, c, 100)).objects).toEqual([
      { ...merged, score: 50 },
      { ...a, score: 50 },
    ]);
    // The merged object's new key row exists: a single delete by it finds the object.
    await t
      .http()
      .delete(`/intel/collections/${c}/objects?objectKeyType=SHA1Hash&objectKey=${sha1(1)}`)
      .set('X-Api-Key', t.adminKey)
      .expect(204);
    expect((await listAll(t, c, 100)).objects).toEqual([{ ...a, score: 50 }]);
  });

  it('items naming the same object behave as single requests in that order (add, update, remove, re-add)', async () => {
    const c = await freshCollection();
    await single(c, file([{ type: 'MD5Hash', value: md5(2) }], { size: 0 })).expect(204);
    const before = await listAll(t, c, 100);
    const key = { type: 'MD5Hash', value: md5(2) };
    const response = await batch(c, [
      file([key], { size: 1 }),
      file([key], { size: 1 }),
      { remove: key },
      { remove: key },
      file([key, { type: 'SHA1Hash', value: sha1(2) }], { size: 2 }),
      file([{ type: 'SHA1Hash', value: sha1(2) }], { size: 3 }),
    ]);
    expect(response.body.items.map((item: { status: string }) => item.status)).toEqual(['Updated', 'Unchanged', 'Removed', 'Absent', 'Added', 'Updated']);
    const final = { type: 'File', keys: [key, { type: 'SHA1Hash', value: sha1(2) }], context: { size: 3 }, tlp: 'TLP:CLEAR' };
    const { changes } = await followAll(t, c, before.changesCursor, 100);
    expect(changes.map((change) => change.operation)).toEqual(['Update', 'Remove', 'Add', 'Update']);
    expect(changes[1].object).toEqual({ type: 'File', keys: [key], context: { size: 1 }, tlp: 'TLP:CLEAR' });
    expect(changes[3].object).toEqual(final);
    expect((await listAll(t, c, 100)).objects).toEqual([{ ...final, score: 50 }]);

    // A new object created and removed within one batch leaves its two changes and nothing else.
    const mid = await listAll(t, c, 100);
    const transient = { type: 'MD5Hash', value: md5(3) };
    expect((await batch(c, [file([transient]), { remove: transient }])).body.items.map((i: { status: string }) => i.status)).toEqual(['Added', 'Removed']);
    expect((await followAll(t, c, mid.changesCursor, 100)).changes.map((change) => change.operation)).toEqual(['Add', 'Remove']);
    expect((await listAll(t, c, 100)).objects).toEqual([{ ...final, score: 50 }]);
  });

  it('reports each bad item with the error of the single endpoint and applies the others', async () => {
    const c = await freshCollection();
    await single(c, file([{ type: 'MD5Hash', value: md5(1) }])).expect(204);
    await single(c, file([{ type: 'SHA1Hash', value: sha1(1) }])).expect(204);
    const bad: [string, unknown][] = [
      ['InvalidKeyFormat', file([{ type: 'MD5Hash', value: 'abc' }])],
      ['InvalidKeySet', file([{ type: 'DomainName', value: 'a.example' }])],
      ['KeySetConflict', file(hashKeys(1))],
      ['SchemaCheckFail', file([{ type: 'MD5Hash', value: md5(5) }], { size: -1 })],
      ['InvalidData', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(6) }], extra: 1 }],
      ['InvalidData', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(7) }], context: { constructor: 1 } }],
      ['InvalidData', 42],
      ['InvalidData', { remove: { type: 'MD5Hash' } }],
    ];
    const good = file([{ type: 'MD5Hash', value: md5(8) }], { size: 8 });
    const response = await batch(c, [...bad.map(([, item]) => item), good, { remove: { type: 'MD5Hash', value: 'xyz' } }]);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ added: 1, updated: 0, unchanged: 0, removed: 0, failed: bad.length + 1 });
    const items = response.body.items as { index: number; status: string; error?: { code: string } }[];
    expect(items.map((item) => item.error?.code)).toEqual([...bad.map(([code]) => code), undefined, 'InvalidKeyFormat']);
    expect(items[bad.length]).toEqual({ index: bad.length, status: 'Added' });
    // Each error is exactly what the single endpoint answers for the same body.
    for (const [index, [, item]] of bad.entries()) {
      if (typeof item !== 'object' || 'remove' in (item as object)) continue;
      const alone = await single(c, item);
      expect(items[index]).toEqual({ index, status: 'Failed', error: alone.body });
    }
    expect((await listAll(t, c, 100)).objects.map((object) => object.keys[0].value)).toEqual([md5(1), sha1(1), md5(8)]);
  });

  it('?atomic=true: any failed item → 422 BatchRejected with the report, nothing applied', async () => {
    const c = await freshCollection();
    await single(c, file([{ type: 'MD5Hash', value: md5(1) }])).expect(204);
    await single(c, file([{ type: 'SHA1Hash', value: sha1(1) }])).expect(204);
    const before = await listAll(t, c, 100);
    const good = [file([{ type: 'MD5Hash', value: md5(2) }]), { remove: { type: 'MD5Hash', value: md5(1) } }];

    // A failure found before the lock (schema) and one found only against the stored objects (conflict).
    for (const failing of [
      file([{ type: 'MD5Hash', value: md5(3) }], { size: 'big' }),
      file([
        { type: 'SHA1Hash', value: sha1(1) },
        { type: 'MD5Hash', value: md5(2) },
      ]),
    ]) {
      const response = await batch(c, [...good, failing], '?atomic=true');
      expectError(response, 'BatchRejected');
      expect(response.body.details).toMatchObject({ added: 0, updated: 0, unchanged: 0, removed: 0, failed: 1 });
      expect(response.body.details.items.map((item: { status: string }) => item.status)).toEqual(['NotApplied', 'NotApplied', 'Failed']);
      expect(response.body.details.items[2].error.code).toMatch(/^(SchemaCheckFail|KeySetConflict)$/);
      const after = await listAll(t, c, 100);
      expect(after.objects).toEqual(before.objects);
      expect((await followAll(t, c, before.changesCursor)).changes).toEqual([]);
    }
    const ok = await batch(c, good, '?atomic=true');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ added: 1, removed: 1, failed: 0 });
    expectError(await batch(c, good, '?atomic=yes'), 'InvalidQueryArgument');
  });

  it('takes NDJSON (blank lines skipped); a line that is not JSON refuses the whole batch', async () => {
    const c = await freshCollection();
    const lines = [JSON.stringify(file([{ type: 'MD5Hash', value: md5(1) }])), '', JSON.stringify({ remove: { type: 'MD5Hash', value: md5(2) } }), ''];
    const response = await ndjson(c, lines.join('\r\n'));
    expect(response.status).toBe(200);
    expect(response.body.items).toEqual([
      { index: 0, status: 'Added' },
      { index: 1, status: 'Absent' },
    ]);

    const before = await listAll(t, c, 100);
    const bad = await ndjson(c, `${JSON.stringify(file([{ type: 'MD5Hash', value: md5(3) }]))}\n{"type": "File",\n`);
    expectError(bad, 'InvalidData');
    expect(bad.body.details).toEqual({ line: 2 });
    expect((await listAll(t, c, 100)).objects).toEqual(before.objects);
    expect((await followAll(t, c, before.changesCursor)).changes).toEqual([]);
  });

  it('refuses malformed requests as a whole: 400 empty/not an array/not JSON, 413 over 10,000 items or 32 MiB, 415', async () => {
    const c = await freshCollection();
    const before = await listAll(t, c, 100);
    expectError(await batch(c, []), 'InvalidData');
    expectError(await ndjson(c, '\n\n'), 'InvalidData');
    expectError(await batch(c, { type: 'File', keys: [] }), 'InvalidData');
    expectError(
      await t.http().post(`/intel/collections/${c}/objects/batch`).set('X-Api-Key', t.adminKey).set('Content-Type', 'application/json').send('[{'),
      'InvalidData',
    );
    const item = { remove: { type: 'MD5Hash', value: md5(1) } };
    expectError(await batch(c, Array(10_001).fill(item)), 'RequestEntityTooLarge');
    expectError(await ndjson(c, `${JSON.stringify(item)}\n`.repeat(10_001)), 'RequestEntityTooLarge');
    const huge = JSON.stringify([{ ...file([{ type: 'MD5Hash', value: md5(1) }]), context: { note: 'x'.repeat(32 * 1024 * 1024) } }]);
    expectError(
      await t.http().post(`/intel/collections/${c}/objects/batch`).set('X-Api-Key', t.adminKey).set('Content-Type', 'application/json').send(huge),
      'RequestEntityTooLarge',
    );
    expectError(
      await t.http().post(`/intel/collections/${c}/objects/batch`).set('X-Api-Key', t.adminKey).set('Content-Type', 'text/plain').send('[]'),
      'UnsupportedMediaType',
    );
    expect((await listAll(t, c, 100)).objects).toEqual(before.objects);
    expect((await followAll(t, c, before.changesCursor)).changes).toEqual([]);

    // Exactly 10,000 items is allowed, and a body over the 16 MiB of other JSON routes is read.
    const allowed = await batch(c, Array(10_000).fill(item));
    expect(allowed.status).toBe(200);
    expect(allowed.body.items).toHaveLength(10_000);
    const big = Array.from({ length: 9 }, (_, n) => file([{ type: 'MD5Hash', value: `${md5(n).slice(1)}` }], { note: 'y'.repeat(2 * 1024 * 1024) }));
    const over16 = await batch(c, big);
    expect(over16.status).toBe(200);
    expect(over16.body.items.map((i: { error: { code: string } }) => i.error.code)).toEqual(Array(9).fill('InvalidKeyFormat'));
  });

  it('counts once against request limits, whatever the number of items', async () => {
    const c = await freshCollection();
    const resources = await t.http().get('/auth/resources?parentID=2').set('X-Api-Key', t.adminKey);
    const resource = (resources.body as { id: number; name: string }[]).find((r) => r.name === c)!;
    const limited = await createKey(t, {
      permissions: [{ resource: resource.id, actions: ['Read', 'Write'] }],
      limits: [{ resource: resource.id, action: 'Write', limit: 2 }],
    });
    const items = Array.from({ length: 50 }, (_, n) => file([{ type: 'MD5Hash', value: md5(n) }]));
    for (const remaining of ['1', '0']) {
      const response = await batch(c, items, '', limited.key);
      expect(response.status).toBe(200);
      expect(response.headers['ratelimit-remaining']).toBe(remaining);
    }
    expectError(await batch(c, items, '', limited.key), 'LimitExceeded');
  });

  it('needs Write on the collection (403 MissingPermissions), 404 for an unknown collection', async () => {
    const c = await freshCollection();
    const resources = await t.http().get('/auth/resources?parentID=2').set('X-Api-Key', t.adminKey);
    const resource = (resources.body as { id: number; name: string }[]).find((r) => r.name === c)!;
    const reader = await createKey(t, { permissions: [{ resource: resource.id, actions: ['Read'] }] });
    expectError(await batch(c, [file([{ type: 'MD5Hash', value: md5(1) }])], '', reader.key), 'MissingPermissions');
    expectError(await batch('no-such-collection', [file([{ type: 'MD5Hash', value: md5(1) }])]), 'NotFound');
    expect((await listAll(t, c, 100)).objects).toEqual([]);
  });
});
