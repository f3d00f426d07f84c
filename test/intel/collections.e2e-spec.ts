import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { expectError } from '../support/clients/intel.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { DEFAULT_SCORING_VIEW } from '../support/scoring.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

function schemaDocument(schemaID: string, title = `Title of ${schemaID}`) {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    schemaID,
    title,
    type: 'object',
    properties: { context: { type: 'object', properties: { size: { type: 'integer', minimum: 0 } } } },
  };
}

describe('intel collections (/intel/collections)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    for (const id of ['phishing-schema', 'phishing-schema-v2', 'file-schema']) {
      const response = await t.intel.createSchema(schemaDocument(id));
      expect(response.status).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  /** The collection's auth resource, as an admin finds it (decisions §3: a child of intel, id 2). */
  async function resourceIdOf(name: string): Promise<number | undefined> {
    const response = await t.intel.get('/auth/resources?parentID=2&limit=1000');
    expect(response.status).toBe(200);
    return (response.body as { id: number; name: string }[]).find((resource) => resource.name === name)?.id;
  }

  describe('POST /intel/collections', () => {
    it('registers a collection: 201 {name}, its own auth resource under intel, and a view with ETag "1"', async () => {
      const response = await t.intel.createCollection({ name: 'phishing', schemaID: 'phishing-schema' });
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ name: 'phishing' });
      expect(await resourceIdOf('phishing')).toEqual(expect.any(Number));

      const viewed = await t.intel.collection('phishing');
      expect(viewed.status).toBe(200);
      expect(viewed.body).toEqual({ name: 'phishing', schemaID: 'phishing-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
      expect(viewed.headers.etag).toBe('"1"');
      expect((await t.intel.collection('phishing').set('If-None-Match', '"1"')).status).toBe(304);
    });

    it('refuses a taken name with 409 DuplicateCollection, also when registrations race', async () => {
      await t.intel.createCollection({ name: 'taken', schemaID: 'file-schema' }).expect(201);
      expectError(await t.intel.createCollection({ name: 'taken', schemaID: 'phishing-schema' }), 'DuplicateCollection');
      expect((await t.intel.collection('taken')).body).toEqual({
        name: 'taken',
        schemaID: 'file-schema',
        defaultTLP: 'TLP:CLEAR',
        scoring: DEFAULT_SCORING_VIEW,
      });

      const racing = await Promise.all(Array.from({ length: 6 }, () => t.intel.createCollection({ name: 'raced', schemaID: 'file-schema' })));
      expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      racing.filter((r) => r.status !== 201).forEach((r) => expectError(r, 'DuplicateCollection'));
    });

    it('refuses an unknown intel schema with 422 SchemaNotFound and creates nothing', async () => {
      expectError(await t.intel.createCollection({ name: 'orphan', schemaID: 'no-such-schema' }), 'SchemaNotFound');
      expectError(await t.intel.collection('orphan'), 'NotFound');
      expect(await resourceIdOf('orphan')).toBeUndefined();
    });

    it.each([
      ['an array body', [{ name: 'arr', schemaID: 'file-schema' }]],
      ['an empty body', {}],
      ['a missing schemaID', { name: 'no-schema' }],
      ['a missing name', { schemaID: 'file-schema' }],
      ['a numeric name', { name: 42, schemaID: 'file-schema' }],
      ['a null name', { name: null, schemaID: 'file-schema' }],
      ['an object schemaID', { name: 'objschema', schemaID: { id: 'file-schema' } }],
      ['a name with a space', { name: 'bad name', schemaID: 'file-schema' }],
      ['a name with a slash', { name: 'a/b', schemaID: 'file-schema' }],
      ['a name with non-ASCII letters', { name: 'é', schemaID: 'file-schema' }],
      ['an empty name', { name: '', schemaID: 'file-schema' }],
      ['the name ".."', { name: '..', schemaID: 'file-schema' }],
      ['a name of 129 characters', { name: 'n'.repeat(129), schemaID: 'file-schema' }],
      ['a huge name', { name: 'n'.repeat(100_000), schemaID: 'file-schema' }],
      ['a malformed schemaID', { name: 'malformed-schema', schemaID: 'bad schema' }],
      ['an unknown field', { name: 'extra', schemaID: 'file-schema', tag: '1' }],
    ])('refuses %s with 400 InvalidData and creates nothing', async (_case, body) => {
      const before = await t.intel.collections('?limit=1000');
      expectError(await t.intel.createCollection(body), 'InvalidData');
      expect((await t.intel.collections('?limit=1000')).body).toEqual(before.body);
    });

    it('accepts every URL-safe character and the longest name', async () => {
      for (const name of ['A.b_c~d-9', 'n'.repeat(128), '...']) {
        expect((await t.intel.createCollection({ name, schemaID: 'file-schema' })).status).toBe(201);
        expect((await t.intel.collection(name)).body).toEqual({ name, schemaID: 'file-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
      }
    });
  });

  describe('GET /intel/collections/{collectionName} and .../schema', () => {
    it('answers 404 NotFound for an unknown collection and 400 InvalidPathArgument for a malformed name', async () => {
      expectError(await t.intel.collection('unknown'), 'NotFound');
      expectError(await t.intel.collection('unknown/schema'), 'NotFound');
      expectError(await t.intel.collection('bad%20name'), 'InvalidPathArgument');
      expectError(await t.intel.collection('n'.repeat(129)), 'InvalidPathArgument');
    });

    it("returns the collection's schema document with the schema's own tag, following schema changes", async () => {
      await t.intel.createCollection({ name: 'with-schema', schemaID: 'phishing-schema-v2' }).expect(201);
      const direct = await t.intel.schema('phishing-schema-v2');
      const viaCollection = await t.intel.collection('with-schema/schema');
      expect(viaCollection.status).toBe(200);
      expect(viaCollection.text).toBe(direct.text);
      expect(viaCollection.headers.etag).toBe(direct.headers.etag);
      expect((await t.intel.collection('with-schema/schema').set('If-None-Match', direct.headers.etag)).status).toBe(304);

      // The tag is usable for the schema PUT (wire-contract §7.3).
      const updated = schemaDocument('phishing-schema-v2', 'Renamed');
      const put = await t.intel.put('/intel/schemas/phishing-schema-v2').set('If-Match', viaCollection.headers.etag).send(updated);
      expect(put.status).toBe(204);
      const after = await t.intel.collection('with-schema/schema');
      expect(after.body).toEqual(updated);
      expect(after.headers.etag).toBe('"2"');
    });
  });

  describe('PATCH /intel/collections/{collectionName}', () => {
    it('changes the schema: 204, the tag increments, the view and .../schema follow', async () => {
      await t.intel.createCollection({ name: 'patched', schemaID: 'phishing-schema' }).expect(201);
      const response = await t.intel.updateCollection('patched', { schemaID: 'file-schema' }, '"1"');
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      const viewed = await t.intel.collection('patched');
      expect(viewed.body).toEqual({ name: 'patched', schemaID: 'file-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
      expect(viewed.headers.etag).toBe('"2"');
      expect((await t.intel.collection('patched/schema')).body).toEqual(schemaDocument('file-schema'));
    });

    it('treats {} and the current schemaID as no-ops that keep the tag', async () => {
      await t.intel.createCollection({ name: 'noop', schemaID: 'phishing-schema' }).expect(201);
      expect((await t.intel.updateCollection('noop', {}, '"1"')).status).toBe(204);
      expect((await t.intel.updateCollection('noop', { schemaID: 'phishing-schema' }, '"1"')).status).toBe(204);
      const viewed = await t.intel.collection('noop');
      expect(viewed.headers.etag).toBe('"1"');
      expect(viewed.body).toEqual({ name: 'noop', schemaID: 'phishing-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
    });

    it('requires If-Match (400 BadRequest) and the current tag (412 ResourceModified)', async () => {
      await t.intel.createCollection({ name: 'tagged', schemaID: 'phishing-schema' }).expect(201);
      expectError(await t.intel.updateCollection('tagged', { schemaID: 'file-schema' }), 'BadRequest');
      await t.intel.updateCollection('tagged', { schemaID: 'file-schema' }, '"1"').expect(204);
      expectError(await t.intel.updateCollection('tagged', { schemaID: 'phishing-schema' }, '"1"'), 'ResourceModified');
      expectError(await t.intel.updateCollection('tagged', {}, '"1"'), 'ResourceModified');
      expectError(await t.intel.updateCollection('tagged', {}, '2'), 'ResourceModified');
      const viewed = await t.intel.collection('tagged');
      expect(viewed.body.schemaID).toBe('file-schema');
      expect(viewed.headers.etag).toBe('"2"');
    });

    it('refuses an unknown schema with 422 SchemaNotFound and keeps the collection', async () => {
      await t.intel.createCollection({ name: 'keeps', schemaID: 'phishing-schema' }).expect(201);
      expectError(await t.intel.updateCollection('keeps', { schemaID: 'no-such-schema' }, '"1"'), 'SchemaNotFound');
      const viewed = await t.intel.collection('keeps');
      expect(viewed.body.schemaID).toBe('phishing-schema');
      expect(viewed.headers.etag).toBe('"1"');
    });

    it('answers 404 NotFound for an unknown collection', async () => {
      expectError(await t.intel.updateCollection('missing', { schemaID: 'file-schema' }, '"1"'), 'NotFound');
    });

    it('checks in order: 404, then 412, then 422 SchemaNotFound', async () => {
      await t.intel.createCollection({ name: 'check-order', schemaID: 'phishing-schema' }).expect(201);
      expectError(await t.intel.updateCollection('missing', { schemaID: 'no-such-schema' }, '"9"'), 'NotFound');
      expectError(await t.intel.updateCollection('check-order', { schemaID: 'no-such-schema' }, '"9"'), 'ResourceModified');
      expectError(await t.intel.updateCollection('check-order', { schemaID: 'no-such-schema' }, '"1"'), 'SchemaNotFound');
      expect((await t.intel.collection('check-order')).headers.etag).toBe('"1"');
    });

    it('lets exactly one of concurrent PATCHes with the same tag win; the others get 412 ResourceModified', async () => {
      await t.intel.createCollection({ name: 'contended', schemaID: 'phishing-schema' }).expect(201);
      const targets = ['file-schema', 'phishing-schema-v2', 'file-schema', 'phishing-schema-v2', 'file-schema', 'phishing-schema-v2'];
      const responses = await Promise.all(targets.map((schemaID) => t.intel.updateCollection('contended', { schemaID }, '"1"')));
      const winners = responses.flatMap((response, i) => (response.status === 204 ? [i] : []));
      expect(winners).toHaveLength(1);
      responses.filter((response) => response.status !== 204).forEach((response) => expectError(response, 'ResourceModified'));
      const viewed = await t.intel.collection('contended');
      expect(viewed.headers.etag).toBe('"2"');
      expect(viewed.body).toEqual({ name: 'contended', schemaID: targets[winners[0]], defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
    });

    it('serves more concurrent registrations and PATCHes than the connection pool holds (none waits forever)', async () => {
      // Each of these runs a transaction; a schema lookup on a second pooled connection inside it starved
      // the pool (24 connections) and hung every request.
      const names = Array.from({ length: 60 }, (_, i) => `pool-${i}`);
      const headers = { 'X-Api-Key': t.adminKey, 'Content-Type': 'application/json' };
      const created = await Promise.all(
        names.map((name) => fetch(`${t.url}/intel/collections`, { method: 'POST', headers, body: JSON.stringify({ name, schemaID: 'phishing-schema' }) })),
      );
      expect(created.map((response) => response.status)).toEqual(names.map(() => 201));
      const patched = await Promise.all(
        names.map((name) =>
          fetch(`${t.url}/intel/collections/${name}`, {
            method: 'PATCH',
            headers: { ...headers, 'If-Match': '"1"' },
            body: JSON.stringify({ schemaID: 'file-schema' }),
          }),
        ),
      );
      expect(patched.map((response) => response.status)).toEqual(names.map(() => 204));
      for (const name of names.slice(0, 3))
        expect((await t.intel.collection(name)).body).toEqual({ name, schemaID: 'file-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
    });

    it.each([
      ['an array body', 'patch-array', [{ schemaID: 'file-schema' }]],
      ['a numeric schemaID', 'patch-number', { schemaID: 5 }],
      ['a malformed schemaID', 'patch-malformed', { schemaID: 'a b' }],
      ['an unknown field', 'patch-unknown', { name: 'renamed' }],
    ])('refuses %s with 400 InvalidData', async (_case, name, body) => {
      await t.intel.createCollection({ name, schemaID: 'phishing-schema' }).expect(201);
      expectError(await t.intel.updateCollection(name, body, '"1"'), 'InvalidData');
      const viewed = await t.intel.collection(name);
      expect(viewed.body).toEqual({ name, schemaID: 'phishing-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
      expect(viewed.headers.etag).toBe('"1"');
    });
  });

  describe('GET /intel/collections', () => {
    it('pages in registration order with limit carried in Link, and refuses bad paging arguments', async () => {
      const all = await t.intel.collections('?limit=1000');
      expect(all.status).toBe(200);
      const names = (all.body as { name: string; schemaID: string }[]).map((item) => item.name);
      expect(names.length).toBeGreaterThan(5);
      expect(all.body[0]).toEqual({ name: 'phishing', schemaID: 'phishing-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });

      const seen: string[] = [];
      let url: string | undefined = '/intel/collections?limit=3';
      while (url) {
        const response: Response = await t.intel.get(url);
        expect(response.status).toBe(200);
        expect(response.body.length).toBeLessThanOrEqual(3);
        seen.push(...(response.body as { name: string }[]).map((item) => item.name));
        const next: string | undefined = parseLinks(response.headers.link).next;
        if (next) {
          expect(new URL(next, 'http://x').searchParams.get('limit')).toBe('3');
          expect(cursorOf(next)).toMatch(/^[A-Za-z0-9_-]+$/);
        }
        url = next;
      }
      expect(seen).toEqual(names);

      // A forged cursor past every id (even beyond the integer column's range) is an empty page, not a 500.
      for (const a of [2147483647, 2147483648, Number.MAX_SAFE_INTEGER]) {
        const beyond = await t.intel.collections(`?cursor=${Buffer.from(JSON.stringify({ a })).toString('base64url')}`);
        expect({ a, status: beyond.status, body: beyond.body }).toEqual({ a, status: 200, body: [] });
      }
      expectError(await t.intel.collections(`?cursor=${Buffer.from('{"a":-1}').toString('base64url')}`), 'InvalidQueryArgument');
      expectError(await t.intel.collections('?cursor=%%%'), 'InvalidQueryArgument');
      expectError(await t.intel.collections(`?cursor=${Buffer.from('{"a":"x"}').toString('base64url')}`), 'InvalidQueryArgument');
      expectError(await t.intel.collections('?limit=-1'), 'InvalidQueryArgument');
    });
  });

  describe('permissions (decisions §3)', () => {
    it('a key with Read on one collection sees only that one and may do nothing else', async () => {
      await t.intel.createCollection({ name: 'readable', schemaID: 'phishing-schema' }).expect(201);
      await t.intel.createCollection({ name: 'hidden', schemaID: 'file-schema' }).expect(201);
      const resourceId = await resourceIdOf('readable');
      const reader = await createKey(t, { permissions: [{ resource: resourceId!, actions: ['Read'] }] });

      const viewed = await t.intel.as(reader.key).collection('readable');
      expect(viewed.status).toBe(200);
      expect(viewed.body).toEqual({ name: 'readable', schemaID: 'phishing-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
      const schema = await t.intel.as(reader.key).collection('readable/schema');
      expect(schema.status).toBe(200);
      expect(schema.body.schemaID).toBe('phishing-schema');

      const listed = await t.intel.as(reader.key).collections();
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([{ name: 'readable', schemaID: 'phishing-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW }]);

      expectError(await t.intel.as(reader.key).collection('hidden'), 'MissingPermissions');
      expectError(await t.intel.as(reader.key).collection('hidden/schema'), 'MissingPermissions');
      expectError(await t.intel.as(reader.key).collection('no-such-collection'), 'MissingPermissions');
      expectError(await t.intel.as(reader.key).updateCollection('readable', { schemaID: 'file-schema' }, '"1"'), 'MissingPermissions');
      expectError(await t.intel.as(reader.key).createCollection({ name: 'by-reader', schemaID: 'file-schema' }), 'MissingPermissions');
      expectError(await t.intel.as(reader.key).post('/intel/schemas').send(schemaDocument('by-reader')), 'MissingPermissions');
      expectError(await t.intel.as(reader.key).get('/intel/schemas/phishing-schema'), 'MissingPermissions');
      expect((await t.intel.collection('readable')).headers.etag).toBe('"1"');
    });

    it('Write on a collection allows PATCH; ReadChildren on intel lists every collection; no permission lists none', async () => {
      await t.intel.createCollection({ name: 'writable', schemaID: 'phishing-schema' }).expect(201);
      const writer = await createKey(t, { permissions: [{ resource: (await resourceIdOf('writable'))!, actions: ['Write'] }] });
      expect((await t.intel.as(writer.key).updateCollection('writable', { schemaID: 'file-schema' }, '"1"')).status).toBe(204);
      expectError(await t.intel.as(writer.key).collection('writable'), 'MissingPermissions');

      const childReader = await createKey(t, { permissions: [{ resource: 2, actions: ['ReadChildren'] }] });
      const everything = await t.intel.collections('?limit=1000');
      expect((await t.intel.as(childReader.key).collections('?limit=1000')).body).toEqual(everything.body);
      expect((await t.intel.as(childReader.key).collection('writable')).status).toBe(200);
      expectError(await t.intel.as(childReader.key).collection('no-such-collection'), 'NotFound');

      const nobody = await createKey(t, { permissions: [{ resource: 4, actions: ['Read'] }] });
      const none = await t.intel.as(nobody.key).collections();
      expect(none.status).toBe(200);
      expect(none.body).toEqual([]);
      expect(none.headers.link).toBeUndefined();
      expectError(await t.http().get('/intel/collections'), 'Unauthorized');
    });
  });
});
