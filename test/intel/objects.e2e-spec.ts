import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ObjectsRepository } from '../../src/intel/objects.repository.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, followAll, hashKeys, listAll, md5, sha1, unscored, type ObjectViewBody } from './objects.helpers.js';

describe('intel objects (/intel/collections/{collection_id}/objects)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  let collectionCount = 0;
  /** A fresh collection per test keeps the listings and feeds of tests apart. */
  async function freshCollection(): Promise<string> {
    const name = `objects-${++collectionCount}`;
    await createCollection(t, name);
    return name;
  }

  const add = (collection: string, body: unknown, key = t.adminKey) =>
    t
      .http()
      .post(`/intel/collections/${collection}/objects`)
      .set('X-Api-Key', key)
      .send(body as object);
  const remove = (collection: string, query: string, key = t.adminKey) =>
    t.http().delete(`/intel/collections/${collection}/objects${query}`).set('X-Api-Key', key);
  const file = (keys: { type: string; value: string }[], context?: Record<string, unknown>) => ({
    type: 'File',
    keys,
    ...(context && { context }),
  });

  /** The collection's objects and, to observe the feed, its changes since `cursor`. */
  async function state(collection: string, cursor?: string) {
    const { objects, changesCursor } = await listAll(t, collection);
    const changes = cursor === undefined ? [] : (await followAll(t, collection, cursor)).changes;
    return { objects, changesCursor, changes };
  }

  describe('POST: add', () => {
    it('creates an object (204, no body) and records an Add change; context defaults to {}', async () => {
      const c = await freshCollection();
      const { changesCursor } = await state(c);
      const response = await add(c, file([{ type: 'MD5Hash', value: md5(1) }]));
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      const after = await state(c, changesCursor);
      const object = { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: {}, tlp: 'TLP:CLEAR' };
      expect(after.objects).toEqual([{ ...object, score: 50 }]);
      expect(after.changes).toEqual([{ operation: 'Add', object }]);
    });

    it.each<[string, string, string, string]>([
      ['MD5Hash in upper case', 'MD5Hash', 'ABCDEF0123456789ABCDEF0123456789', 'abcdef0123456789abcdef0123456789'],
      ['SHA512Hash in mixed case', 'SHA512Hash', 'aB'.repeat(64), 'ab'.repeat(64)],
      ['an IDN domain', 'DomainName', 'Bücher.Example.', 'xn--bcher-kva.example'],
      ['a URL with its default port', 'URL', 'HTTP://Example.COM:80/a/../b?q=1', 'http://example.com/b?q=1'],
      ['a URL with an IDN host', 'URL', 'https://bücher.de:443/x', 'https://xn--bcher-kva.de/x'],
      // Plain ASCII names and URLs take the normalisation's fast path (no IDNA or URL library).
      ['a plain ASCII domain with a root dot', 'DomainName', 'Mail_1.Plain-Host.EXAMPLE.', 'mail_1.plain-host.example'],
      ['a plain URL without a path', 'URL', 'HTTPS://Plain.Example:8443', 'https://plain.example:8443/'],
      ['a plain URL with a query', 'URL', 'http://Plain.Example/A/b?x=1&y=Z', 'http://plain.example/A/b?x=1&y=Z'],
      ['an uncompressed IPv6 address', 'IPAddress', '2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
      ['an IPv4 address', 'IPAddress', '192.0.2.1', '192.0.2.1'],
      ['an IPv6 network', 'IPNetwork', '2001:DB8:0:0::/32', '2001:db8::/32'],
      ['an IPv4 network', 'IPNetwork', '10.0.0.0/8', '10.0.0.0/8'],
    ])('normalises %s', async (_name, type, value, stored) => {
      const c = await freshCollection();
      const objectType = type.endsWith('Hash') ? 'File' : type;
      expect((await add(c, { type: objectType, keys: [{ type, value }], context: {} })).status).toBe(204);
      expect((await state(c)).objects).toEqual([{ type: objectType, keys: [{ type, value: stored }], context: {}, tlp: 'TLP:CLEAR', score: 50 }]);
      // The normalised value names the same object: re-adding the raw form changes nothing.
      const { changesCursor } = await state(c);
      expect((await add(c, { type: objectType, keys: [{ type, value }], context: {} })).status).toBe(204);
      expect((await state(c, changesCursor)).changes).toEqual([]);
    });

    it.each<[string, string, string]>([
      ['a short MD5', 'MD5Hash', 'abc'],
      ['a non-hex SHA1', 'SHA1Hash', 'z'.repeat(40)],
      ['a SHA256 of SHA1 length', 'SHA256Hash', 'a'.repeat(40)],
      ['a domain with an empty label', 'DomainName', 'a..example'],
      ['a domain with a 64-character label', 'DomainName', `${'a'.repeat(64)}.example`],
      ['a domain with a space', 'DomainName', 'a b.example'],
      ['an invalid punycode label', 'DomainName', 'xn--zz.example'],
      ['a relative URL', 'URL', '/no/host'],
      ['a URL without a host', 'URL', 'mailto:someone@example.com'],
      ['an IPv4 address with an octet over 255', 'IPAddress', '192.0.2.256'],
      ['an IPv6 address with two "::"', 'IPAddress', '1::2::3'],
      ['a CIDR with host bits set', 'IPNetwork', '10.0.0.1/8'],
      ['an IPv6 CIDR with host bits set', 'IPNetwork', '2001:db8::1/32'],
      ['a CIDR prefix over 32', 'IPNetwork', '10.0.0.0/33'],
      ['an address without a prefix', 'IPNetwork', '10.0.0.0'],
    ])('refuses %s with 422 InvalidKeyFormat and stores nothing', async (_name, type, value) => {
      const c = await freshCollection();
      const objectType = type.endsWith('Hash') ? 'File' : type;
      expectError(await add(c, { type: objectType, keys: [{ type, value }], context: {} }), 'InvalidKeyFormat');
      expect((await state(c)).objects).toEqual([]);
    });

    it.each<[string, unknown]>([
      ['a File without keys', file([])],
      [
        'a File with a non-hash key',
        file([
          { type: 'MD5Hash', value: md5(1) },
          { type: 'DomainName', value: 'a.example' },
        ]),
      ],
      [
        'a File with two MD5 keys',
        file([
          { type: 'MD5Hash', value: md5(1) },
          { type: 'MD5Hash', value: md5(2) },
        ]),
      ],
      ['a DomainName with a URL key', { type: 'DomainName', keys: [{ type: 'URL', value: 'http://a.example/' }] }],
      [
        'a DomainName with two keys',
        {
          type: 'DomainName',
          keys: [
            { type: 'DomainName', value: 'a.example' },
            { type: 'DomainName', value: 'b.example' },
          ],
        },
      ],
      ['a URL without keys', { type: 'URL', keys: [] }],
      ['an IPAddress with a hash key', { type: 'IPAddress', keys: [{ type: 'MD5Hash', value: md5(1) }] }],
      ['an IPNetwork with an IPAddress key', { type: 'IPNetwork', keys: [{ type: 'IPAddress', value: '10.0.0.1' }] }],
    ])('refuses %s with 422 InvalidKeySet', async (_name, body) => {
      const c = await freshCollection();
      expectError(await add(c, body), 'InvalidKeySet');
      expect((await state(c)).objects).toEqual([]);
    });

    it('merges keys that are equal after normalisation (one key stored)', async () => {
      const c = await freshCollection();
      await add(c, {
        type: 'DomainName',
        keys: [
          { type: 'DomainName', value: 'A.example' },
          { type: 'DomainName', value: 'a.example.' },
        ],
      }).expect(204);
      await add(
        c,
        file([
          { type: 'MD5Hash', value: md5(10).toUpperCase() },
          { type: 'MD5Hash', value: md5(10) },
        ]),
      ).expect(204);
      expect((await state(c)).objects).toEqual([
        { type: 'DomainName', keys: [{ type: 'DomainName', value: 'a.example' }], context: {}, tlp: 'TLP:CLEAR', score: 50 },
        { type: 'File', keys: [{ type: 'MD5Hash', value: md5(10) }], context: {}, tlp: 'TLP:CLEAR', score: 50 },
      ]);
    });

    it('merges into the existing object: context replaced, keys extended, one Update change', async () => {
      const c = await freshCollection();
      await add(c, file([{ type: 'SHA1Hash', value: sha1(1) }], { size: 1, old: true })).expect(204);
      const { changesCursor } = await state(c);
      // Both keys, the SHA1 one first; the object lists them in its own order.
      await add(c, file(hashKeys(1).reverse(), { size: 2 })).expect(204);
      const merged = { type: 'File', keys: hashKeys(1), context: { size: 2 }, tlp: 'TLP:CLEAR' };
      const after = await state(c, changesCursor);
      expect(after.objects).toEqual([{ ...merged, score: 50 }]);
      expect(after.changes).toEqual([{ operation: 'Update', object: merged }]);

      // A subset of its keys names the same object; only the context changes.
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }], { size: 3 })).expect(204);
      const third = await state(c, after.changesCursor);
      expect(third.objects).toEqual([{ ...merged, context: { size: 3 }, score: 50 }]);
      expect(third.changes).toEqual([{ operation: 'Update', object: { ...merged, context: { size: 3 } } }]);
    });

    it('writes no change record when an add changes nothing (identical re-send, or a subset of keys)', async () => {
      const c = await freshCollection();
      const body = file(hashKeys(5), { size: 7, tags: ['a', 'b'] });
      await add(c, body).expect(204);
      const { changesCursor } = await state(c);
      await add(c, body).expect(204);
      await add(c, { ...body, context: { tags: ['a', 'b'], size: 7 } }).expect(204);
      await add(c, file([{ type: 'MD5Hash', value: md5(5).toUpperCase() }], { size: 7, tags: ['a', 'b'] })).expect(204);
      expect((await state(c, changesCursor)).changes).toEqual([]);
    });

    it('refuses keys of two different objects with 422 KeySetConflict and changes nothing', async () => {
      const c = await freshCollection();
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }], { size: 1 })).expect(204);
      await add(c, file([{ type: 'SHA1Hash', value: sha1(2) }], { size: 2 })).expect(204);
      const before = await state(c);
      const response = await add(
        c,
        file(
          [
            { type: 'MD5Hash', value: md5(1) },
            { type: 'SHA1Hash', value: sha1(2) },
          ],
          { size: 3 },
        ),
      );
      expectError(response, 'KeySetConflict');
      const after = await state(c, before.changesCursor);
      expect(after.objects).toEqual(before.objects);
      expect(after.changes).toEqual([]);
    });

    it("refuses a key clashing with the object's own key of that type with 422 KeySetConflict", async () => {
      const c = await freshCollection();
      await add(c, file(hashKeys(1))).expect(204);
      const before = await state(c);
      expectError(
        await add(
          c,
          file([
            { type: 'MD5Hash', value: md5(1) },
            { type: 'SHA1Hash', value: sha1(9) },
          ]),
        ),
        'KeySetConflict',
      );
      const after = await state(c, before.changesCursor);
      expect(after.objects).toEqual(before.objects);
      expect(after.changes).toEqual([]);
    });

    it('checks the object against the collection schema: 422 SchemaCheckFail with wire details', async () => {
      const c = await freshCollection();
      const response = await add(c, file([{ type: 'MD5Hash', value: md5(1) }], { size: -1 }));
      expectError(response, 'SchemaCheckFail');
      expect(response.body.details).toEqual(
        expect.objectContaining({
          AbsoluteKeywordLocation: 'size-schema#/properties/context/properties/size/minimum',
          InstanceLocation: '/context/size',
          Message: expect.any(String),
        }),
      );
      expect((await state(c)).objects).toEqual([]);
    });

    it('validates against the current schema after the collection switches schema', async () => {
      const c = await freshCollection();
      const strict = {
        ...(await import('./objects.helpers.js')).sizeSchema('strict-schema'),
        required: ['context'],
        properties: { context: { type: 'object', required: ['source'] } },
      };
      await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send(strict).expect(201);
      const view = await t.http().get(`/intel/collections/${c}`).set('X-Api-Key', t.adminKey);
      await t
        .http()
        .patch(`/intel/collections/${c}`)
        .set('X-Api-Key', t.adminKey)
        .set('If-Match', view.headers.etag as string)
        .send({ schemaID: 'strict-schema' })
        .expect(204);
      expectError(await add(c, file([{ type: 'MD5Hash', value: md5(1) }], { size: 1 })), 'SchemaCheckFail');
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }], { source: 'x' })).expect(204);
    });

    it.each<[string, unknown]>([
      ['a missing type', { keys: [{ type: 'MD5Hash', value: md5(1) }] }],
      ['an unknown object type', { type: 'Email', keys: [{ type: 'MD5Hash', value: md5(1) }] }],
      ['an unknown key type', { type: 'File', keys: [{ type: 'CRC32', value: 'abc' }] }],
      ['missing keys', { type: 'File' }],
      ['keys that are not an array', { type: 'File', keys: { type: 'MD5Hash', value: md5(1) } }],
      ['a key that is null', { type: 'File', keys: [null] }],
      ['a key that is a string', { type: 'File', keys: [md5(1)] }],
      ['a key without a value', { type: 'File', keys: [{ type: 'MD5Hash' }] }],
      ['a key value that is not a string', { type: 'File', keys: [{ type: 'MD5Hash', value: 12 }] }],
      ['a key value that is too long', { type: 'URL', keys: [{ type: 'URL', value: `http://a.example/${'x'.repeat(5000)}` }] }],
      ['a context that is an array', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: [1] }],
      ['a context that is null', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: null }],
      ['a context that is a string', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: 'x' }],
      ['an unknown field', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], extra: 1 }],
      ['a NUL character in the context', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: { a: 'x\u0000y' } }],
      ['an unpaired surrogate in the context', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(1) }], context: { a: '\ud800' } }],
    ])('refuses %s with 400 InvalidData and stores nothing', async (_name, body) => {
      const c = await freshCollection();
      expectError(await add(c, body), 'InvalidData');
      expect((await state(c)).objects).toEqual([]);
    });

    it('refuses a body that is not JSON with 400 InvalidData', async () => {
      const c = await freshCollection();
      const response = await t
        .http()
        .post(`/intel/collections/${c}/objects`)
        .set('X-Api-Key', t.adminKey)
        .set('Content-Type', 'application/json')
        .send('{"type": "File", ');
      expectError(response, 'InvalidData');
    });

    it('keeps context attributes named like Object.prototype members, at any depth (listing and feed)', async () => {
      const c = await freshCollection();
      const { changesCursor } = await state(c);
      const context = {
        toString: 'x',
        valueOf: 1,
        hasOwnProperty: true,
        toLocaleString: null,
        __defineGetter__: 'g',
        nested: { isPrototypeOf: 2, propertyIsEnumerable: [3] },
        list: [{ toString: 3 }, 'plain'],
      };
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }], context)).expect(204);
      const after = await state(c, changesCursor);
      expect(after.objects.map((object) => object.context)).toEqual([context]);
      expect(after.changes.map((change) => change.object.context)).toEqual([context]);
    });

    it.each([
      ['__proto__ at the top', '{"__proto__": {"polluted": true}}', '/context/__proto__'],
      ['constructor nested', '{"a": {"constructor": "c"}}', '/context/a/constructor'],
      ['prototype inside an array', '{"a": [1, {"prototype": {}}]}', '/context/a/1/prototype'],
    ])('refuses a context attribute named %s (the pipe would drop it) with 400 InvalidData', async (_name, context, pointer) => {
      const c = await freshCollection();
      const response = await t
        .http()
        .post(`/intel/collections/${c}/objects`)
        .set('X-Api-Key', t.adminKey)
        .set('Content-Type', 'application/json')
        .send(`{"type": "File", "keys": [{"type": "MD5Hash", "value": "${md5(1)}"}], "context": ${context}}`);
      expectError(response, 'InvalidData');
      expect(response.body.details).toEqual({ InstanceLocation: pointer });
      expect((await state(c)).objects).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('accepts those names as values, and as keys outside the context', async () => {
      const c = await freshCollection();
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }], { name: 'constructor', list: ['__proto__'] })).expect(204);
      expect((await state(c)).objects[0].context).toEqual({ name: 'constructor', list: ['__proto__'] });
    });

    it('keeps a context as given, including nested values and a literal "\\u0000" text', async () => {
      const c = await freshCollection();
      const context = { nested: { list: [1, 'two', null, { deep: true }] }, text: 'back\\u0000slash', unicode: 'żółw 🐢' };
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }], context)).expect(204);
      expect((await state(c)).objects[0].context).toEqual(context);
    });

    it('answers 404 NotFound for an unknown collection, before looking at the keys', async () => {
      expectError(await add('no-such-collection', file([{ type: 'MD5Hash', value: md5(1) }])), 'NotFound');
      expectError(await add('no-such-collection', file([{ type: 'MD5Hash', value: 'xyz' }])), 'NotFound');
      expectError(await add('no-such-collection', file([])), 'NotFound');
    });
  });

  describe('DELETE: remove', () => {
    it('removes the object named by any of its keys, normalised first; the Remove change carries the last state', async () => {
      const c = await freshCollection();
      await add(c, file(hashKeys(1), { size: 4 })).expect(204);
      await add(c, { type: 'URL', keys: [{ type: 'URL', value: 'http://a.b/c?d=e&f' }] }).expect(204);
      const before = await state(c);
      await remove(c, `?objectKeyType=SHA1Hash&objectKey=${sha1(1).toUpperCase()}`).expect(204);
      await remove(c, `?objectKeyType=URL&objectKey=${encodeURIComponent('HTTP://A.B:80/c?d=e&f')}`).expect(204);
      const after = await state(c, before.changesCursor);
      expect(after.objects).toEqual([]);
      expect(after.changes).toEqual([
        { operation: 'Remove', reason: 'Deleted', object: unscored(before.objects[0]) },
        { operation: 'Remove', reason: 'Deleted', object: unscored(before.objects[1]) },
      ]);
      expect(before.objects[0].context).toEqual({ size: 4 });
    });

    it('is idempotent: deleting an absent object is 204 with no change record', async () => {
      const c = await freshCollection();
      await add(c, { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '2001:db8::1' }] }).expect(204);
      await remove(c, `?objectKeyType=IPAddress&objectKey=${encodeURIComponent('2001:DB8:0::1')}`).expect(204);
      const { changesCursor } = await state(c);
      await remove(c, `?objectKeyType=IPAddress&objectKey=${encodeURIComponent('2001:db8::1')}`).expect(204);
      await remove(c, `?objectKeyType=MD5Hash&objectKey=${md5(99)}`).expect(204);
      expect((await state(c, changesCursor)).changes).toEqual([]);
    });

    it.each([
      ['no parameters', ''],
      ['no objectKey', '?objectKeyType=MD5Hash'],
      ['no objectKeyType', `?objectKey=${md5(1)}`],
      ['an unknown key type', `?objectKeyType=CRC32&objectKey=${md5(1)}`],
      ['a repeated objectKey', `?objectKeyType=MD5Hash&objectKey=${md5(1)}&objectKey=${md5(2)}`],
      ['an unknown parameter', `?objectKeyType=MD5Hash&objectKey=${md5(1)}&force=true`],
    ])('refuses %s with 400 InvalidQueryArgument and deletes nothing', async (_name, query) => {
      const c = await freshCollection();
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }])).expect(204);
      expectError(await remove(c, query), 'InvalidQueryArgument');
      expect((await state(c)).objects).toHaveLength(1);
    });

    it.each([
      ['a malformed hash', '?objectKeyType=MD5Hash&objectKey=xyz'],
      ['an empty value', '?objectKeyType=DomainName&objectKey='],
      ['a network with host bits', `?objectKeyType=IPNetwork&objectKey=${encodeURIComponent('10.0.0.1/8')}`],
    ])('refuses %s with 422 InvalidKeyFormat', async (_name, query) => {
      const c = await freshCollection();
      expectError(await remove(c, query), 'InvalidKeyFormat');
    });

    it('answers 404 NotFound for an unknown collection, before looking at the key', async () => {
      expectError(await remove('no-such-collection', `?objectKeyType=MD5Hash&objectKey=${md5(1)}`), 'NotFound');
      expectError(await remove('no-such-collection', '?objectKeyType=MD5Hash&objectKey=xyz'), 'NotFound');
    });
  });

  describe('GET: list', () => {
    it('pages in insertion order with next links that keep limit; the first page alone carries rel="related"', async () => {
      const c = await freshCollection();
      for (let n = 1; n <= 7; n++) await add(c, file([{ type: 'MD5Hash', value: md5(n) }], { n })).expect(204);
      const first = await t.http().get(`/intel/collections/${c}/objects?limit=3`).set('X-Api-Key', t.adminKey);
      expect(first.status).toBe(200);
      const links = parseLinks(first.headers.link as string);
      expect(links.related).toMatch(new RegExp(`^/intel/collections/${c}/objects/changes\\?cursor=[A-Za-z0-9_-]+$`));
      expect(new URL(links.next, 'http://x').searchParams.get('limit')).toBe('3');
      expect((first.body as ObjectViewBody[]).map((o) => o.context.n)).toEqual([1, 2, 3]);

      const { objects } = await listAll(t, c, 3);
      expect(objects.map((o) => o.context.n)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      const last = await t.http().get(`/intel/collections/${c}/objects?limit=1000`).set('X-Api-Key', t.adminKey);
      expect(parseLinks(last.headers.link as string).next).toBeUndefined();
      expect(last.body).toHaveLength(7);
    });

    it('gives an empty collection [] with a changes cursor that follows later changes', async () => {
      const c = await freshCollection();
      const response = await t.http().get(`/intel/collections/${c}/objects`).set('X-Api-Key', t.adminKey);
      expect(response.body).toEqual([]);
      const cursor = cursorOf(parseLinks(response.headers.link as string).related) as string;
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }])).expect(204);
      expect((await followAll(t, c, cursor)).changes.map((change) => change.operation)).toEqual(['Add']);
    });

    it.each([
      ['a malformed cursor', '?cursor=***'],
      ['a cursor that is not base64url JSON', '?cursor=bm90IGpzb24'],
      ['a limit of 0', '?limit=0'],
      ['a non-integer limit', '?limit=ten'],
      ['an unknown parameter', '?sort=desc'],
    ])('refuses %s with 400 InvalidQueryArgument', async (_name, query) => {
      const c = await freshCollection();
      expectError(await t.http().get(`/intel/collections/${c}/objects${query}`).set('X-Api-Key', t.adminKey), 'InvalidQueryArgument');
    });

    it("reads a page from its own collection's index range, however many objects other collections hold", async () => {
      const front = await freshCollection();
      const back = await freshCollection();
      const empty = await freshCollection();
      const { db } = t;
      try {
        // Two large collections, all of one's objects older than the other's: walking the primary key to the
        // first page of `back` (or of `empty`) would pass over every object of `front`.
        for (const [name, from] of [
          [front, 1_000_000],
          [back, 1_100_000],
        ] as const) {
          await db.query(
            `INSERT INTO intel_object (id, collection_id, type, keys, context)
             SELECT $2::bigint + g, (SELECT id FROM intel_collection WHERE name = $1), 'File', '[]', '{}'
               FROM generate_series(1, 20000) g`,
            [name, from],
          );
        }
        await db.query('ANALYZE intel_object');
        // The statements the service sends for these pages, explained with their own parameters.
        const dataSource = (t.app.get(ObjectsRepository) as unknown as { dataSource: DataSource }).dataSource;
        const query = dataSource.query.bind(dataSource);
        const sent: [string, unknown[]][] = [];
        dataSource.query = ((sql: string, parameters?: unknown[]) => {
          if (/FROM intel_object\s+WHERE \(collection_id, id\) >/.test(sql)) sent.push([sql, parameters ?? []]);
          return query(sql, parameters);
        }) as typeof dataSource.query;
        try {
          const first = await t.http().get(`/intel/collections/${back}/objects?limit=2`).set('X-Api-Key', t.adminKey);
          expect(first.body).toHaveLength(2);
          const next = parseLinks(first.headers.link as string).next;
          expect((await t.http().get(next).set('X-Api-Key', t.adminKey)).body).toHaveLength(2);
          expect((await listAll(t, empty)).objects).toEqual([]);
        } finally {
          dataSource.query = query;
        }
        expect(sent).toHaveLength(3);
        interface PlanNode {
          'Relation Name'?: string;
          'Index Name'?: string;
          'Rows Removed by Filter'?: number;
          Plans?: PlanNode[];
        }
        const scansOf = (node: PlanNode): PlanNode[] => [...(node['Relation Name'] === 'intel_object' ? [node] : []), ...(node.Plans ?? []).flatMap(scansOf)];
        for (const [sql, parameters] of sent) {
          const [
            {
              'QUERY PLAN': [plan],
            },
          ] = (await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters)).rows;
          const scans = scansOf((plan as { Plan: PlanNode }).Plan);
          expect(scans.map((scan) => [scan['Index Name'], scan['Rows Removed by Filter'] ?? 0])).toEqual([['IDX_intel_object_collection_id', 0]]);
        }
      } finally {
        await db.query(`DELETE FROM intel_object WHERE id > 1000000`);
      }
    });

    it('answers 404 NotFound for an unknown collection and 400 for a malformed name', async () => {
      expectError(await t.http().get('/intel/collections/nope/objects').set('X-Api-Key', t.adminKey), 'NotFound');
      expectError(await t.http().get('/intel/collections/a%20b/objects').set('X-Api-Key', t.adminKey), 'InvalidPathArgument');
    });
  });

  describe('permissions', () => {
    it('a key with Read on one collection reads it and nothing else, and cannot write', async () => {
      const mine = await freshCollection();
      const other = await freshCollection();
      await add(mine, file([{ type: 'MD5Hash', value: md5(1) }])).expect(204);
      const resources = await t.http().get('/auth/resources?parentID=2&limit=1000').set('X-Api-Key', t.adminKey);
      const resourceId = (resources.body as { id: number; name: string }[]).find((r) => r.name === mine)?.id as number;
      const reader = await createKey(t, { permissions: [{ resource: resourceId, actions: ['Read'] }] });

      const listed = await listAll(t, mine, 3, reader.key);
      expect(listed.objects).toHaveLength(1);
      const changes = await t.http().get(`/intel/collections/${mine}/objects/changes?cursor=${listed.changesCursor}`).set('X-Api-Key', reader.key);
      expect(changes.status).toBe(200);

      expectError(await add(mine, file([{ type: 'MD5Hash', value: md5(2) }]), reader.key), 'MissingPermissions');
      expectError(await remove(mine, `?objectKeyType=MD5Hash&objectKey=${md5(1)}`, reader.key), 'MissingPermissions');
      expectError(await t.http().get(`/intel/collections/${other}/objects`).set('X-Api-Key', reader.key), 'MissingPermissions');
      expectError(await add(other, file([{ type: 'MD5Hash', value: md5(2) }]), reader.key), 'MissingPermissions');
      expectError(await t.http().get('/intel/collections/no-such/objects').set('X-Api-Key', reader.key), 'MissingPermissions');
      expect((await state(mine)).objects).toHaveLength(1);
    });

    it('a key with Write on a collection adds and deletes but cannot list or follow it', async () => {
      const c = await freshCollection();
      const resources = await t.http().get('/auth/resources?parentID=2&limit=1000').set('X-Api-Key', t.adminKey);
      const resourceId = (resources.body as { id: number; name: string }[]).find((r) => r.name === c)?.id as number;
      const writer = await createKey(t, { permissions: [{ resource: resourceId, actions: ['Write'] }] });
      const { changesCursor } = await state(c);
      await add(c, file([{ type: 'MD5Hash', value: md5(1) }]), writer.key).expect(204);
      await remove(c, `?objectKeyType=MD5Hash&objectKey=${md5(1)}`, writer.key).expect(204);
      expectError(await t.http().get(`/intel/collections/${c}/objects`).set('X-Api-Key', writer.key), 'MissingPermissions');
      expectError(await t.http().get(`/intel/collections/${c}/objects/changes?cursor=${changesCursor}`).set('X-Api-Key', writer.key), 'MissingPermissions');
    });

    it('refuses requests without credentials with 401 Unauthorized', async () => {
      const c = await freshCollection();
      expectError(await t.http().get(`/intel/collections/${c}/objects`), 'Unauthorized');
      expectError(
        await t
          .http()
          .post(`/intel/collections/${c}/objects`)
          .send(file([{ type: 'MD5Hash', value: md5(1) }])),
        'Unauthorized',
      );
    });
  });
});
