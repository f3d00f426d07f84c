import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { expectError } from '../support/clients/intel.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

/** A typical intel schema (interface-spec §2.3), with keys in an order jsonb would not keep. */
function documentOf(schemaID: string, extra: Record<string, unknown> = {}) {
  return {
    schemaID,
    $schema: DRAFT,
    title: `Title of ${schemaID}`,
    type: 'object',
    properties: {
      type: { enum: ['DomainName', 'URL'] },
      keys: { type: 'array', items: { type: 'object' } },
      context: {
        type: 'object',
        properties: { size: { type: 'integer', minimum: 0 }, zeta: { type: 'string' }, alpha: { type: 'boolean' } },
        additionalProperties: false,
      },
    },
    required: ['type', 'keys'],
    ...extra,
  };
}

describe('intel schemas (/intel/schemas)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('POST /intel/schemas', () => {
    it('registers a document: 201 {schemaID}, and GET returns the same JSON text with ETag "1"', async () => {
      // Raw text as the SDK's json.dumps sends it: key order, nesting, unicode and numbers must survive.
      const text =
        '{"schemaID": "phishing-schema", "title": "Phishing \\u00e9", "description": "NUL \\u0000 kept", "$schema": "https://json-schema.org/draft/2020-12/schema", ' +
        '"type": "object", "x-vendor": {"z": [1, 2.5, {"b": null, "a": true}], "a": "last"}, ' +
        '"properties": {"context": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 10}}}}}';
      const created = await t.intel.post('/intel/schemas').set('Content-Type', 'application/json').send(text);
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ schemaID: 'phishing-schema' });

      const viewed = await t.intel.schema('phishing-schema');
      expect(viewed.status).toBe(200);
      expect(viewed.headers.etag).toBe('"1"');
      expect(viewed.text).toBe(JSON.stringify(JSON.parse(text)));
    });

    it('keeps attributes named __proto__, constructor, prototype or like Object.prototype methods', async () => {
      const text =
        '{"schemaID": "proto-names", "__proto__": {"a": 1}, "properties": {"constructor": {"type": "string"}, ' +
        '"prototype": {}, "toString": {"type": "integer"}, "hasOwnProperty": {"const": {"__proto__": null}}}}';
      const created = await t.intel.post('/intel/schemas').set('Content-Type', 'application/json').send(text);
      expect(created.status).toBe(201);
      expect((await t.intel.schema('proto-names')).text).toBe(JSON.stringify(JSON.parse(text)));
      const list = await t.intel.get('/intel/schemas?limit=1000');
      expect(list.body).toContainEqual({ schemaID: 'proto-names', title: '' });
    });

    it('answers If-None-Match with the current tag with 304, and an older tag with the document', async () => {
      await t.intel.createSchema(documentOf('cached')).expect(201);
      const notModified = await t.intel.schema('cached').set('If-None-Match', '"1"');
      expect(notModified.status).toBe(304);
      const modified = await t.intel.schema('cached').set('If-None-Match', '"7"');
      expect(modified.status).toBe(200);
      expect(modified.body).toEqual(documentOf('cached'));
    });

    it('accepts unknown keywords and unknown formats (annotations in 2020-12) and a document without $schema or title', async () => {
      const document = { schemaID: 'annotated', 'x-owner': 'team', type: 'string', format: 'vendor-specific' };
      expect((await t.intel.createSchema(document)).status).toBe(201);
      expect((await t.intel.schema('annotated')).body).toEqual(document);
    });

    it('accepts documents sharing an $id, even a meta-schema URI, without disturbing later registrations', async () => {
      for (const [schemaID, $id] of [
        ['meta-id', DRAFT],
        ['meta-core-id', 'https://json-schema.org/draft/2020-12/meta/core'],
        ['shared-id-1', 'https://example.com/shared'],
        ['shared-id-2', 'https://example.com/shared'],
      ]) {
        expect((await t.intel.createSchema({ schemaID, $id, type: 'object', $defs: { n: { type: 'integer' } } })).status).toBe(201);
      }
      expect((await t.intel.createSchema(documentOf('after-meta-ids'))).status).toBe(201);
      expectError(await t.intel.createSchema({ schemaID: 'still-checked', type: 'nope' }), 'InvalidData');
    });

    it('refuses a taken schemaID with 409 DuplicateSchema, also under concurrent registration', async () => {
      await t.intel.createSchema(documentOf('taken')).expect(201);
      expectError(await t.intel.createSchema(documentOf('taken', { title: 'other' })), 'DuplicateSchema');
      expect((await t.intel.schema('taken')).body).toEqual(documentOf('taken'));

      const racing = await Promise.all(Array.from({ length: 6 }, () => t.intel.createSchema(documentOf('raced'))));
      expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      racing.filter((r) => r.status === 409).forEach((r) => expectError(r, 'DuplicateSchema'));
    });

    it.each([
      ['an array body', [documentOf('in-array')]],
      ['no schemaID', { type: 'object' }],
      ['a numeric schemaID', { schemaID: 5, type: 'object' }],
      ['a schemaID with a slash', { schemaID: 'a/b' }],
      ['a schemaID starting with a dot', { schemaID: '.hidden' }],
      ['a schemaID of 129 characters', { schemaID: 'a'.repeat(129) }],
      ['an empty schemaID', { schemaID: '' }],
      ['a draft-07 $schema', { schemaID: 'draft7', $schema: 'http://json-schema.org/draft-07/schema#' }],
      ['a non-string $schema', { schemaID: 'draftnum', $schema: 2020 }],
      ['an invalid type', { schemaID: 'badtype', type: 'integerish' }],
      ['a negative minLength', { schemaID: 'badlen', minLength: -1 }],
      ['an unresolvable $ref', { schemaID: 'badref', $ref: '#/$defs/missing' }],
      ['a remote $ref', { schemaID: 'remote', $ref: 'https://example.com/schema.json' }],
      ['an invalid regular expression', { schemaID: 'badregex', pattern: '([a-z' }],
      ['an asynchronous schema', { schemaID: 'async', $async: true, type: 'object' }],
      ['a non-string title', { schemaID: 'badtitle', title: 5 }],
      ['a title with U+0000', { schemaID: 'nultitle', title: 'a\u0000b' }],
    ])('refuses %s with 400 InvalidData and stores nothing', async (_case, body) => {
      const response = await t.intel.createSchema(body);
      expectError(response, 'InvalidData');
      expect(typeof response.body.message).toBe('string');
      const id = (body as { schemaID?: unknown }).schemaID;
      if (typeof id === 'string' && /^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/.test(id)) expectError(await t.intel.schema(id), 'NotFound');
    });

    it('refuses documents nested deeper than 256 levels with 400 InvalidData, and keeps deep-but-sane ones exactly', async () => {
      const nested = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown;
      const fine = { schemaID: 'deep-ok', 'x-deep': nested(200) };
      expect((await t.intel.createSchema(fine)).status).toBe(201);
      expect((await t.intel.schema('deep-ok')).text).toBe(JSON.stringify(fine));
      expectError(await t.intel.createSchema({ schemaID: 'deep-300', 'x-deep': nested(300) }), 'InvalidData');
      const raw = `{"schemaID": "deep-huge", "x-deep": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      const huge = await t.intel.post('/intel/schemas').set('Content-Type', 'application/json').send(raw);
      expectError(huge, 'InvalidData');
      expectError(await t.intel.schema('deep-huge'), 'NotFound');
    });

    it('refuses a number out of the range of a double (it would read back as null) with 400 InvalidData', async () => {
      for (const [schemaID, number] of [
        ['huge-minimum', '1e400'],
        ['huge-negative', '-1e400'],
      ]) {
        const text = `{"schemaID": "${schemaID}", "type": "object", "properties": {"n": {"minimum": ${number}}}}`;
        const response = await t.intel.post('/intel/schemas').set('Content-Type', 'application/json').send(text);
        expectError(response, 'InvalidData');
        expectError(await t.intel.schema(schemaID), 'NotFound');
      }
      await t.intel.createSchema(documentOf('finite')).expect(201);
      const replaced = await t.intel
        .put('/intel/schemas/finite')
        .set('If-Match', '"1"')
        .set('Content-Type', 'application/json')
        .send('{"schemaID": "finite", "x-vendor": [1, 2, 1e999]}');
      expectError(replaced, 'InvalidData');
      expect((await t.intel.schema('finite')).body).toEqual(documentOf('finite'));
      // Large but finite numbers are kept.
      expect((await t.intel.createSchema({ schemaID: 'large-finite', maximum: 1e300 })).status).toBe(201);
      expect((await t.intel.schema('large-finite')).body).toEqual({ schemaID: 'large-finite', maximum: 1e300 });
    });

    it('reports the compiler message for a document that does not compile', async () => {
      const response = await t.intel.createSchema({ schemaID: 'compile-msg', type: 'object', properties: { a: { type: 'nope' } } });
      expectError(response, 'InvalidData');
      expect(response.body.message).toContain('JSON Schema 2020-12');
      expect(response.body.message).toContain('type');
    });

    it('refuses a body that is not JSON, and a JSON string, with a 400 JSON error', async () => {
      const notJson = await t.intel.post('/intel/schemas').set('Content-Type', 'application/json').send('{"schemaID": ');
      expectError(notJson, 'InvalidData');
      const text = await t.intel.post('/intel/schemas').set('Content-Type', 'text/plain').send('{"schemaID": "plain"}');
      expectError(text, 'InvalidData');
      expectError(await t.intel.schema('plain'), 'NotFound');
    });
  });

  describe('PUT /intel/schemas/{schema_id}', () => {
    it('replaces the document: 204, the tag increments, GET returns the new document', async () => {
      await t.intel.createSchema(documentOf('replaced')).expect(201);
      const replacement = documentOf('replaced', { title: 'New title', description: 'nested', $defs: { a: { const: [1, { b: 2 }] } } });
      const response = await t.intel.replaceSchema('replaced', replacement, '"1"');
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      const viewed = await t.intel.schema('replaced');
      expect(viewed.headers.etag).toBe('"2"');
      expect(viewed.text).toBe(JSON.stringify(replacement));
    });

    it('treats a replayed PUT of the current document as success, with the previous or the current tag', async () => {
      await t.intel.createSchema(documentOf('replayed')).expect(201);
      const replacement = documentOf('replayed', { title: 'v2' });
      expect((await t.intel.replaceSchema('replayed', replacement, '"1"')).status).toBe(204);
      // The SDK retries PUT after a transport error: the second attempt carries the old tag.
      expect((await t.intel.replaceSchema('replayed', replacement, '"1"')).status).toBe(204);
      expect((await t.intel.replaceSchema('replayed', replacement, '"2"')).status).toBe(204);
      expect((await t.intel.schema('replayed')).headers.etag).toBe('"2"');
      // A different document with that old tag is a real conflict.
      expectError(await t.intel.replaceSchema('replayed', documentOf('replayed', { title: 'v3' }), '"1"'), 'ResourceModified');
      expect((await t.intel.schema('replayed')).body).toEqual(replacement);
    });

    it('refuses a stale tag with 412 ResourceModified and changes nothing', async () => {
      await t.intel.createSchema(documentOf('stale')).expect(201);
      await t.intel.replaceSchema('stale', documentOf('stale', { title: 'second' }), '"1"').expect(204);
      expectError(await t.intel.replaceSchema('stale', documentOf('stale', { title: 'third' }), '"1"'), 'ResourceModified');
      expectError(await t.intel.replaceSchema('stale', documentOf('stale', { title: 'third' }), '2'), 'ResourceModified');
      const viewed = await t.intel.schema('stale');
      expect(viewed.headers.etag).toBe('"2"');
      expect(viewed.body.title).toBe('second');
    });

    it('requires If-Match: 400 BadRequest without it', async () => {
      await t.intel.createSchema(documentOf('untagged')).expect(201);
      expectError(await t.intel.replaceSchema('untagged', documentOf('untagged', { title: 'x' })), 'BadRequest');
      expectError(await t.intel.replaceSchema('untagged', documentOf('untagged', { title: 'x' }), ''), 'BadRequest');
      expect((await t.intel.schema('untagged')).headers.etag).toBe('"1"');
    });

    it('refuses a body whose schemaID differs from the path with 422 InvalidSchemaID', async () => {
      await t.intel.createSchema(documentOf('fixed-id')).expect(201);
      expectError(await t.intel.replaceSchema('fixed-id', documentOf('other-id'), '"1"'), 'InvalidSchemaID');
      expectError(await t.intel.schema('other-id'), 'NotFound');
      expect((await t.intel.schema('fixed-id')).headers.etag).toBe('"1"');
    });

    it('answers 404 NotFound for an unknown schema', async () => {
      expectError(await t.intel.replaceSchema('never-registered', documentOf('never-registered'), '"1"'), 'NotFound');
    });

    it('refuses an invalid replacement with 400 InvalidData and keeps the old document', async () => {
      await t.intel.createSchema(documentOf('kept')).expect(201);
      expectError(await t.intel.replaceSchema('kept', { schemaID: 'kept', type: 'nope' }, '"1"'), 'InvalidData');
      expectError(await t.intel.replaceSchema('kept', [documentOf('kept')], '"1"'), 'InvalidData');
      expectError(await t.intel.replaceSchema('kept', { schemaID: 'kept', $schema: 'http://json-schema.org/draft-04/schema#' }, '"1"'), 'InvalidData');
      expect((await t.intel.schema('kept')).body).toEqual(documentOf('kept'));
    });

    it('refuses a malformed path value with 400 InvalidPathArgument', async () => {
      expectError(await t.intel.replaceSchema('bad%20id', documentOf('bad id'), '"1"'), 'InvalidPathArgument');
    });

    it('checks in order: If-Match, document, schemaID, existence, replay, tag', async () => {
      await t.intel.createSchema(documentOf('ordered')).expect(201);
      await t.intel.replaceSchema('ordered', documentOf('ordered', { title: 'v2' }), '"1"').expect(204);
      const invalid = { schemaID: 'ordered', type: 'nope' };
      // If-Match missing beats an invalid document (both 400, told apart by the code).
      expectError(await t.intel.replaceSchema('ordered', invalid), 'BadRequest');
      // An invalid document beats a stale tag and an unknown schema.
      expectError(await t.intel.replaceSchema('ordered', invalid, '"1"'), 'InvalidData');
      expectError(await t.intel.replaceSchema('never-there', { schemaID: 'never-there', type: 'nope' }, '"1"'), 'InvalidData');
      // A changed schemaID beats a stale tag and an unknown schema.
      expectError(await t.intel.replaceSchema('ordered', documentOf('renamed'), '"1"'), 'InvalidSchemaID');
      expectError(await t.intel.replaceSchema('never-there', documentOf('renamed'), '"1"'), 'InvalidSchemaID');
      // Unknown beats the tag; the current document beats a stale tag; then the tag is judged.
      expectError(await t.intel.replaceSchema('never-there', documentOf('never-there'), '"7"'), 'NotFound');
      expect((await t.intel.replaceSchema('ordered', documentOf('ordered', { title: 'v2' }), '"1"')).status).toBe(204);
      expectError(await t.intel.replaceSchema('ordered', documentOf('ordered', { title: 'v3' }), '"1"'), 'ResourceModified');
      expect((await t.intel.schema('ordered')).headers.etag).toBe('"2"');
    });

    it('lets exactly one of concurrent PUTs with the same tag win; the others get 412 ResourceModified', async () => {
      await t.intel.createSchema(documentOf('contended')).expect(201);
      const documents = Array.from({ length: 8 }, (_, i) => documentOf('contended', { title: `writer ${i}` }));
      const responses = await Promise.all(documents.map((document) => t.intel.replaceSchema('contended', document, '"1"')));
      const winners = responses.flatMap((response, i) => (response.status === 204 ? [i] : []));
      expect(winners).toHaveLength(1);
      responses.filter((response) => response.status !== 204).forEach((response) => expectError(response, 'ResourceModified'));
      const viewed = await t.intel.schema('contended');
      expect(viewed.headers.etag).toBe('"2"');
      expect(viewed.body).toEqual(documents[winners[0]]);
    });
  });

  describe('GET /intel/schemas/{schema_id}', () => {
    it('answers 404 NotFound for an unknown schema and 400 InvalidPathArgument for a malformed id', async () => {
      expectError(await t.intel.schema('unknown-schema'), 'NotFound');
      expectError(await t.intel.schema('-leading-dash'), 'InvalidPathArgument');
      expectError(await t.intel.schema('a'.repeat(129)), 'InvalidPathArgument');
      expectError(await t.intel.schema('bad%00id'), 'InvalidPathArgument');
    });
  });

  describe('GET /intel/schemas', () => {
    it('pages by schemaID with limit carried in Link, titles "" when absent, and ends without a next link', async () => {
      const ids = ['page-c', 'page-a', 'page-e', 'page-b', 'page-d'];
      for (const id of ids) {
        await t.intel.createSchema(id === 'page-b' ? { schemaID: id, type: 'object' } : documentOf(id)).expect(201);
      }
      const seen: { schemaID: string; title: string }[] = [];
      let url: string | undefined = '/intel/schemas?limit=2';
      let pages = 0;
      while (url) {
        const response: Response = await t.intel.get(url);
        expect(response.status).toBe(200);
        expect(Array.isArray(response.body)).toBe(true);
        expect(response.body.length).toBeLessThanOrEqual(2);
        seen.push(...response.body);
        const next: string | undefined = parseLinks(response.headers.link).next;
        if (next) {
          expect(new URL(next, 'http://x').searchParams.get('limit')).toBe('2');
          expect(cursorOf(next)).toMatch(/^[A-Za-z0-9_-]+$/);
        }
        url = next;
        pages += 1;
      }
      const listed = seen.map((item) => item.schemaID);
      expect(listed).toEqual([...listed].sort());
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed.filter((id) => id.startsWith('page-'))).toEqual(['page-a', 'page-b', 'page-c', 'page-d', 'page-e']);
      expect(pages).toBe(Math.ceil(listed.length / 2));
      expect(seen.find((item) => item.schemaID === 'page-b')).toEqual({ schemaID: 'page-b', title: '' });
      expect(seen.find((item) => item.schemaID === 'page-a')).toEqual({ schemaID: 'page-a', title: 'Title of page-a' });
    });

    it('refuses bad paging arguments with 400 InvalidQueryArgument', async () => {
      const list = (query: string) => t.intel.get(`/intel/schemas${query}`);
      expectError(await list('?cursor=not*base64'), 'InvalidQueryArgument');
      expectError(await list(`?cursor=${Buffer.from('{"a":1}').toString('base64url')}`), 'InvalidQueryArgument');
      expectError(await list(`?cursor=${Buffer.from('{"s":"x\' OR 1=1"}').toString('base64url')}`), 'InvalidQueryArgument');
      expectError(await list(`?cursor=${Buffer.from('[1]').toString('base64url')}`), 'InvalidQueryArgument');
      expectError(await list('?limit=0'), 'InvalidQueryArgument');
      expectError(await list('?limit=two'), 'InvalidQueryArgument');
      expectError(await list('?other=1'), 'InvalidQueryArgument');
    });
  });

  describe('permissions (decisions §3)', () => {
    it('lets Read on intel view and list but not register or replace (403 MissingPermissions)', async () => {
      await t.intel.createSchema(documentOf('guarded')).expect(201);
      const reader = await createKey(t, { permissions: [{ resource: 2, actions: ['Read'] }] });
      expect((await t.intel.as(reader.key).schema('guarded')).status).toBe(200);
      expect((await t.intel.as(reader.key).get('/intel/schemas')).status).toBe(200);
      expectError(await t.intel.as(reader.key).createSchema(documentOf('by-reader')), 'MissingPermissions');
      expectError(await t.intel.as(reader.key).replaceSchema('guarded', documentOf('guarded', { title: 'x' }), '"1"'), 'MissingPermissions');
      expectError(await t.intel.schema('by-reader'), 'NotFound');

      const writer = await createKey(t, { permissions: [{ resource: 2, actions: ['Write'] }] });
      expectError(await t.intel.as(writer.key).schema('guarded'), 'MissingPermissions');
      expect((await t.intel.as(writer.key).createSchema(documentOf('by-writer'))).status).toBe(201);
      expect((await t.intel.as(writer.key).replaceSchema('by-writer', documentOf('by-writer', { title: 'x' }), '"1"')).status).toBe(204);
    });

    it('answers 401 Unauthorized without credentials', async () => {
      expectError(await t.http().get('/intel/schemas'), 'Unauthorized');
      expectError(await t.http().post('/intel/schemas').send(documentOf('anon')), 'Unauthorized');
    });
  });
});
