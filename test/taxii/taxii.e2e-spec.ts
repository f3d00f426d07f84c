import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaxiiWritesService } from '../../src/taxii/taxii-writes.service.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, parseJson, resourceIdOf, ROOT, TAXII, taxiiClient } from './taxii-support.js';

type Stix = Record<string, unknown> & { id: string; type: string };
interface Envelope {
  more: boolean;
  next?: string;
  objects?: Stix[];
}

const MD5 = '44d88612fea8a8f36de82e1278abb02f';
const SHA256 = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';
const EXTENSION = 'extension-definition--4bf25bbc-6c10-46ee-9f8e-7fa8323f5b24';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('TAXII 2.1', () => {
  let t: TestApp;
  let feeds: string;
  let admin: ReturnType<typeof taxiiClient>;
  const add = (collection: string, body: object) => t.http().post(`/intel/collections/${collection}/objects`).set('X-Api-Key', t.adminKey).send(body);
  const remove = (collection: string, type: string, key: string) =>
    t.http().delete(`/intel/collections/${collection}/objects`).query({ objectKeyType: type, objectKey: key }).set('X-Api-Key', t.adminKey);

  beforeAll(async () => {
    t = await createTestApp();
    admin = taxiiClient(t, t.adminKey);
    feeds = await createCollection(t, 'feeds');
  });
  afterAll(async () => {
    await t.close();
  });

  describe('discovery, API root, collections', () => {
    it('serves discovery and the API root with and without the final slash, as application/taxii+json;version=2.1', async () => {
      for (const path of ['/taxii2/', '/taxii2']) {
        const response = await admin.get(path);
        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toBe(TAXII);
        expect(response.body).toEqual({ title: expect.any(String), description: expect.any(String), default: '/taxii2/api/', api_roots: ['/taxii2/api/'] });
      }
      for (const path of [`${ROOT}/`, ROOT]) {
        const response = await admin.get(path);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ versions: [TAXII], max_content_length: 32 * 1024 * 1024 });
      }
    });

    it('lists a collection per intel collection, with a fixed UUIDv4 id, alias and title the name', async () => {
      const response = await admin.get(`${ROOT}/collections/`);
      expect(response.status).toBe(200);
      const collection = (response.body as { collections: Record<string, unknown>[] }).collections.find((c) => c.id === feeds);
      expect(collection).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        title: 'feeds',
        description: expect.any(String),
        alias: 'feeds',
        can_read: true,
        can_write: true,
        media_types: ['application/stix+json;version=2.1'],
      });
      expect((await admin.get(`${ROOT}/collections/${feeds}/`)).body).toEqual(collection);
      expect((await admin.get(`${ROOT}/collections/${feeds}`)).body).toEqual(collection);
      const missing = await admin.get(`${ROOT}/collections/00000000-0000-4000-8000-000000000000/`);
      expect(missing.status).toBe(404);
      expect(missing.headers['content-type']).toBe(TAXII);
      expect(missing.body).toMatchObject({ title: 'Not Found', http_status: '404', error_code: 'NotFound', description: expect.any(String) });
    });
  });

  describe('credentials and permissions', () => {
    it('401 with WWW-Authenticate: Basic without credentials; Basic, Token, Bearer and X-Api-Key all work', async () => {
      const none = await t.http().get('/taxii2/').set('Accept', TAXII).buffer(true).parse(parseJson);
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/^Basic realm="taxii"/);
      expect(none.headers['content-type']).toBe(TAXII);
      expect(none.body).toMatchObject({ http_status: '401', error_code: 'Unauthorized' });
      expect((await t.http().get('/taxii2/').auth('anyone', 'wrong')).status).toBe(401);
      expect((await t.http().get('/taxii2/').set('Authorization', `Token ${t.adminKey}`)).status).toBe(200);
      expect((await t.http().get('/taxii2/').set('X-Api-Key', t.adminKey)).status).toBe(200);
    });

    it('a Read-only key: can_write false, 403 on POST and DELETE; collections it cannot read or write are invisible', async () => {
      await createCollection(t, 'hidden');
      const reader = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, 'feeds'), actions: ['Read'] }] });
      const client = taxiiClient(t, reader.key);
      const listed = (await client.get(`${ROOT}/collections/`)).body as { collections: { title: string; can_read: boolean; can_write: boolean }[] };
      expect(listed.collections).toEqual([expect.objectContaining({ title: 'feeds', can_read: true, can_write: false })]);
      expect((await client.get(`${ROOT}/collections/${feeds}/objects/`)).status).toBe(200);
      const post = await client.post(`${ROOT}/collections/${feeds}/objects/`, { objects: [] });
      expect(post.status).toBe(403);
      expect(post.body).toMatchObject({ http_status: '403', error_code: 'MissingPermissions' });
      expect((await client.delete(`${ROOT}/collections/${feeds}/objects/indicator--00000000-0000-4000-8000-000000000000/`)).status).toBe(403);
      const hiddenId = (await admin.get(`${ROOT}/collections/`)).body.collections.find((c: { title: string }) => c.title === 'hidden').id;
      expect((await client.get(`${ROOT}/collections/${hiddenId}/`)).status).toBe(404);
      expect((await client.get(`${ROOT}/collections/${hiddenId}/objects/`)).status).toBe(403);
      const writer = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, 'hidden'), actions: ['Write'] }] });
      const writerCollections = (await taxiiClient(t, writer.key).get(`${ROOT}/collections/`)).body.collections;
      expect(writerCollections).toEqual([expect.objectContaining({ title: 'hidden', can_read: false, can_write: true })]);
    });
  });

  describe('media types', () => {
    it('406 for an Accept allowing neither TAXII 2.1 nor */*; 415 for a POST that is not TAXII 2.1', async () => {
      const get = (accept: string) => t.http().get(`${ROOT}/collections/`).auth('u', t.adminKey).set('Accept', accept).buffer(true).parse(parseJson);
      expect((await get('application/json')).status).toBe(406);
      expect((await get('application/taxii+json;version=2.0')).status).toBe(406);
      expect((await get('application/taxii+json;version=2.1;q=0, text/html')).status).toBe(406);
      const refused = await get('text/html');
      expect(refused.headers['content-type']).toBe(TAXII);
      expect(refused.body).toMatchObject({ http_status: '406', error_code: 'NotAcceptable' });
      for (const accept of ['*/*', 'application/taxii+json', 'application/taxii+json; version=2.1', 'text/html, */*;q=0.1']) {
        expect((await get(accept)).status).toBe(200);
      }
      const post = await t
        .http()
        .post(`${ROOT}/collections/${feeds}/objects/`)
        .auth('u', t.adminKey)
        .set('Accept', TAXII)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ objects: [] }))
        .buffer(true)
        .parse(parseJson);
      expect(post.status).toBe(415);
      expect(post.body).toMatchObject({ http_status: '415', error_code: 'UnsupportedMediaType' });
    });
  });

  describe('objects, versions, manifest', () => {
    let lifeOne: Stix;

    it('projects an object to its indicator and observable; the identity and extension definition come first', async () => {
      expect(
        (
          await add('feeds', {
            type: 'File',
            keys: [
              { type: 'SHA256Hash', value: SHA256 },
              { type: 'MD5Hash', value: MD5 },
            ],
            context: { severity: 5 },
          })
        ).status,
      ).toBe(204);
      const response = await admin.get(`${ROOT}/collections/${feeds}/objects/`);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe(TAXII);
      const envelope = response.body as Envelope;
      expect(envelope.more).toBe(false);
      expect(envelope).not.toHaveProperty('next');
      const objects = envelope.objects!;
      expect(objects.map((o) => o.type)).toEqual(['identity', 'extension-definition', 'indicator', 'file']);
      lifeOne = objects[2];
      expect(lifeOne).toMatchObject({
        spec_version: '2.1',
        pattern: `[file:hashes.MD5 = '${MD5}' OR file:hashes.'SHA-256' = '${SHA256}']`,
        pattern_type: 'stix',
        created_by_ref: objects[0].id,
        extensions: { [EXTENSION]: { extension_type: 'property-extension', context: { severity: 5 } } },
      });
      expect(lifeOne.created).toMatch(TIMESTAMP);
      expect(lifeOne.valid_from).toBe(lifeOne.created);
      expect(objects[3]).toMatchObject({ type: 'file', hashes: { MD5, 'SHA-256': SHA256 } });
      const first = response.headers['x-taxii-date-added-first'];
      const last = response.headers['x-taxii-date-added-last'];
      expect(first).toMatch(TIMESTAMP);
      expect(last).toMatch(TIMESTAMP);
      expect(last > first).toBe(true);
      const manifest = (await admin.get(`${ROOT}/collections/${feeds}/manifest/`)).body as {
        objects: { id: string; date_added: string; version: string; media_type: string }[];
      };
      expect(manifest.objects.map((record) => record.id)).toEqual(objects.map((o) => o.id));
      const dates = manifest.objects.map((record) => record.date_added);
      expect([...dates].sort()).toEqual(dates);
      expect(new Set(dates).size).toBe(dates.length);
      expect(manifest.objects[2]).toEqual({
        id: lifeOne.id,
        date_added: lifeOne.modified,
        version: lifeOne.modified,
        media_type: 'application/stix+json;version=2.1',
      });
    });

    it('every change is a version; removal revokes it; a re-add is a new indicator', async () => {
      expect((await add('feeds', { type: 'File', keys: [{ type: 'MD5Hash', value: MD5 }], context: { severity: 6 } })).status).toBe(204);
      expect((await remove('feeds', 'MD5Hash', MD5)).status).toBe(204);
      expect((await add('feeds', { type: 'File', keys: [{ type: 'MD5Hash', value: MD5 }], context: { severity: 7 } })).status).toBe(204);

      const all = (await admin.get(`${ROOT}/collections/${feeds}/objects/${lifeOne.id}/?match[version]=all`)).body as Envelope;
      expect(all.objects!.map((o) => [o.extensions, o.revoked ?? false])).toEqual([
        [{ [EXTENSION]: { extension_type: 'property-extension', context: { severity: 5 } } }, false],
        [{ [EXTENSION]: { extension_type: 'property-extension', context: { severity: 6 } } }, false],
        [{ [EXTENSION]: { extension_type: 'property-extension', context: { severity: 6 } } }, true],
      ]);
      const modified = all.objects!.map((o) => o.modified as string);
      expect([...modified].sort()).toEqual(modified);
      expect(new Set(all.objects!.map((o) => o.created)).size).toBe(1);
      const versions = await admin.get(`${ROOT}/collections/${feeds}/objects/${lifeOne.id}/versions/`);
      expect(versions.body).toEqual({ more: false, versions: modified });
      expect(versions.headers['x-taxii-date-added-last']).toBe(modified[2]);

      const last = (await admin.get(`${ROOT}/collections/${feeds}/objects/${lifeOne.id}/`)).body as Envelope;
      expect(last.objects).toEqual([all.objects![2]]);
      const first = (await admin.get(`${ROOT}/collections/${feeds}/objects/${lifeOne.id}/?match[version]=first`)).body as Envelope;
      expect(first.objects).toEqual([all.objects![0]]);
      const at = (await admin.get(`${ROOT}/collections/${feeds}/objects/${lifeOne.id}/?match[version]=${modified[1]}`)).body as Envelope;
      expect(at.objects).toEqual([all.objects![1]]);

      const indicators = ((await admin.get(`${ROOT}/collections/${feeds}/objects/?match[type]=indicator`)).body as Envelope).objects!;
      expect(indicators).toHaveLength(2);
      expect(indicators[1].id).not.toBe(lifeOne.id);
      expect(indicators[1]).not.toHaveProperty('revoked');
    });

    it('pages by limit with more/next; next alone walks the same; a foreign or forged next is 400', async () => {
      const all = ((await admin.get(`${ROOT}/collections/${feeds}/objects/?match[version]=all`)).body as Envelope).objects!;
      const walked: Stix[] = [];
      let response = await admin.get(`${ROOT}/collections/${feeds}/objects/?match[version]=all&limit=2`);
      for (;;) {
        const envelope = response.body as Envelope;
        expect(envelope.objects!.length).toBeLessThanOrEqual(2);
        walked.push(...envelope.objects!);
        expect(envelope.more).toBe(envelope.next !== undefined);
        if (!envelope.more) break;
        response = await admin.get(`${ROOT}/collections/${feeds}/objects/?next=${envelope.next}`);
      }
      expect(walked).toEqual(all);

      const next = ((await admin.get(`${ROOT}/collections/${feeds}/objects/?limit=1`)).body as Envelope).next!;
      const other = await createCollection(t, 'other');
      const foreign = await admin.get(`${ROOT}/collections/${other}/objects/?next=${next}`);
      expect(foreign.status).toBe(400);
      expect(foreign.body).toMatchObject({ http_status: '400', error_code: 'InvalidQueryArgument' });
      expect((await admin.get(`${ROOT}/collections/${feeds}/objects/?next=bm9wZQ`)).status).toBe(400);
      const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(next, 'base64url').toString()), s: 10 ** 9 })).toString('base64url');
      expect((await admin.get(`${ROOT}/collections/${feeds}/objects/?next=${forged}`)).status).toBe(400);
    });

    it('polls by added_after = X-TAXII-Date-Added-Last; malformed parameters are 400 TAXII errors', async () => {
      const response = await admin.get(`${ROOT}/collections/${feeds}/objects/?match[version]=all`);
      const last = response.headers['x-taxii-date-added-last'];
      const empty = await admin.get(`${ROOT}/collections/${feeds}/objects/?added_after=${last}`);
      expect(empty.body).toEqual({ more: false });
      expect(empty.headers['x-taxii-date-added-last']).toBe(last);
      expect((await add('feeds', { type: 'DomainName', keys: [{ type: 'DomainName', value: "it's.example" }], context: {} })).status).toBe(422);
      expect((await add('feeds', { type: 'URL', keys: [{ type: 'URL', value: "http://example.com/it's" }], context: {} })).status).toBe(204);
      const polled = (await admin.get(`${ROOT}/collections/${feeds}/objects/?added_after=${last}`)).body as Envelope;
      expect(polled.objects!.map((o) => o.type)).toEqual(['indicator', 'url']);
      expect(polled.objects![0].pattern).toBe("[url:value = 'http://example.com/it\\'s']");
      for (const query of [
        'added_after=yesterday',
        'added_after=2026-02-30T00:00:00Z',
        'limit=0',
        'limit=x',
        'next=',
        'match[version]=newest',
        'match[id]=bad',
        'match[type]=Bad!',
      ]) {
        const bad = await admin.get(`${ROOT}/collections/${feeds}/objects/?${query}`);
        expect([query, bad.status, bad.headers['content-type']]).toEqual([query, 400, TAXII]);
      }
    });
  });

  describe('writes', () => {
    const indicator = (id: string, pattern: string, extra: object = {}) => ({
      type: 'indicator',
      spec_version: '2.1',
      id,
      created: '2026-01-01T00:00:00.000Z',
      modified: '2026-01-01T00:00:00.000Z',
      pattern,
      pattern_type: 'stix',
      valid_from: '2026-01-01T00:00:00Z',
      ...extra,
    });

    it('POST an envelope: 202 with a complete status; per-object failures with a reason; the status is kept', async () => {
      const envelope = {
        objects: [
          indicator('indicator--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c01', "[domain-name:value = 'posted.example']", { name: 'posted' }),
          { type: 'domain-name', spec_version: '2.1', id: 'domain-name--5b7d2d3e-9a57-5f1c-9f6e-0d1c2b3a4f50', value: 'posted.example' },
          indicator('indicator--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c02', "[domain-name:value = 'a.example'] FOLLOWEDBY [domain-name:value = 'b.example']"),
          { type: 'relationship', id: 'relationship--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c03', relationship_type: 'indicates' },
          { value: 'no type' },
          indicator('indicator--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c04', "[ipv4-addr:value = '999.1.1.1']"),
        ],
      };
      const response = await admin.post(`${ROOT}/collections/${feeds}/objects/`, envelope);
      expect(response.status).toBe(202);
      expect(response.headers['content-type']).toBe(TAXII);
      const status = response.body as {
        id: string;
        status: string;
        total_count: number;
        success_count: number;
        failure_count: number;
        pending_count: number;
        successes: { id: string }[];
        failures: { id: string; message: string }[];
      };
      expect(status).toMatchObject({ status: 'complete', total_count: 6, success_count: 2, failure_count: 4, pending_count: 0 });
      expect(status.successes.map((s) => s.id)).toEqual([envelope.objects[0].id, envelope.objects[1].id]);
      expect(status.failures.map((f) => f.message)).toEqual([
        expect.stringMatching(/one observation/),
        expect.stringMatching(/relationship are not stored/),
        expect.stringMatching(/type and an id/),
        expect.stringMatching(/IPAddress/),
      ]);
      const again = await admin.get(`/taxii2/api/status/${status.id}/`);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(status);
      expect((await admin.get('/taxii2/api/status/00000000-0000-4000-8000-000000000000/')).status).toBe(404);
      // A key that cannot see the collection written to does not see its statuses either.
      await createCollection(t, 'elsewhere');
      const stranger = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, 'elsewhere'), actions: ['Read', 'Write'] }] });
      const hidden = await taxiiClient(t, stranger.key).get(`/taxii2/api/status/${status.id}/`);
      expect([hidden.status, hidden.body.error_code]).toEqual([404, 'NotFound']);

      // Kept at least 24 hours: the periodic cleanup keeps it now, and removes it once it is older.
      await t.app.get(TaxiiWritesService).removeOldStatuses();
      expect((await admin.get(`/taxii2/api/status/${status.id}`)).status).toBe(200);
      await t.db.query(`UPDATE taxii_status SET created_at = now() - interval '23 hours 59 minutes' WHERE id = $1`, [status.id]);
      await t.app.get(TaxiiWritesService).removeOldStatuses();
      expect((await admin.get(`/taxii2/api/status/${status.id}`)).status).toBe(200);
      await t.db.query(`UPDATE taxii_status SET created_at = now() - interval '24 hours 1 minute' WHERE id = $1`, [status.id]);
      await t.app.get(TaxiiWritesService).removeOldStatuses();
      expect((await admin.get(`/taxii2/api/status/${status.id}`)).status).toBe(404);

      const stored = await t.http().get('/intel/collections/feeds/objects').set('X-Api-Key', t.adminKey);
      expect(stored.body).toContainEqual({
        type: 'DomainName',
        keys: [{ type: 'DomainName', value: 'posted.example' }],
        context: { name: 'posted' },
        tlp: 'TLP:CLEAR',
        // A TAXII write is the admin key's native write (F/6).
        score: 50,
      });
    });

    it('re-posting what is served fails none and makes no new version', async () => {
      const served = ((await admin.get(`${ROOT}/collections/${feeds}/objects/`)).body as Envelope).objects!;
      const before = (await admin.get(`${ROOT}/collections/${feeds}/manifest/?match[version]=all`)).body;
      const response = await admin.post(`${ROOT}/collections/${feeds}/objects/`, { objects: served.filter((o) => !o.revoked) });
      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({ failure_count: 0 });
      expect((await admin.get(`${ROOT}/collections/${feeds}/manifest/?match[version]=all`)).body).toEqual(before);
    });

    it('400 for a body that is not JSON or has no objects, 413 over max_content_length; nothing applied', async () => {
      const raw = (body: string | Buffer) =>
        t.http().post(`${ROOT}/collections/${feeds}/objects/`).auth('u', t.adminKey).set('Content-Type', TAXII).send(body).buffer(true).parse(parseJson);
      expect((await raw('{')).status).toBe(400);
      expect((await raw('{"objects": []}')).status).toBe(400);
      expect((await raw('[]')).body).toMatchObject({ http_status: '400', error_code: 'InvalidData' });
      // Declared larger than max_content_length: answered before the body is sent.
      const huge = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        const request = httpRequest(`${t.url}${ROOT}/collections/${feeds}/objects/`, {
          method: 'POST',
          headers: {
            Authorization: `Basic ${Buffer.from(`u:${t.adminKey}`).toString('base64')}`,
            'Content-Type': TAXII,
            'Content-Length': 32 * 1024 * 1024 + 1,
          },
        });
        request.on('response', (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type']!, body }));
        });
        request.on('error', reject);
        request.write('{"objects": [');
      });
      expect(huge.status).toBe(413);
      expect(huge.type).toBe(TAXII);
      expect(JSON.parse(huge.body)).toMatchObject({ http_status: '413', error_code: 'RequestEntityTooLarge' });
    });

    it('DELETE removes the object: its indicator gets a last, revoked version', async () => {
      const live = ((await admin.get(`${ROOT}/collections/${feeds}/objects/?match[type]=indicator`)).body as Envelope).objects!.find((o) => !o.revoked)!;
      const response = await admin.delete(`${ROOT}/collections/${feeds}/objects/${live.id}/`);
      expect(response.status).toBe(200);
      const last = ((await admin.get(`${ROOT}/collections/${feeds}/objects/${live.id}/`)).body as Envelope).objects!;
      expect(last).toEqual([expect.objectContaining({ id: live.id, revoked: true })]);
      expect((await admin.delete(`${ROOT}/collections/${feeds}/objects/${live.id}/`)).status).toBe(404);
      const unknown = 'indicator--00000000-0000-4000-8000-000000000000';
      for (const path of [`objects/${unknown}/`, `objects/${unknown}/versions/`]) {
        const missing = await admin.get(`${ROOT}/collections/${feeds}/${path}`);
        expect([path, missing.status, missing.body.error_code]).toEqual([path, 404, 'NotFound']);
      }
      expect((await admin.get('/taxii2/api/nothing/here/')).status).toBe(404);
    });
  });

  describe('a STIX bundle on the native API', () => {
    it('runs the example of docs/taxii.md as written', async () => {
      const block = /```sh\n([\s\S]*?)```/.exec(readFileSync(new URL('../../docs/taxii.md', import.meta.url), 'utf8'))![1];
      const dir = await mkdtemp(join(tmpdir(), 'ids-taxii-doc-'));
      try {
        const bundle = {
          type: 'bundle',
          id: 'bundle--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c20',
          objects: [{ type: 'url', id: 'url--6b4f3a52-8c5b-5a8e-9d0b-8e8f3f8a1c21', value: 'http://doc.example/' }],
        };
        await writeFile(join(dir, 'bundle.json'), JSON.stringify(bundle));
        const { stdout } = await promisify(execFile)('sh', ['-c', block], { cwd: dir, env: { PATH: process.env.PATH, BASE: t.url, KEY: t.adminKey } });
        expect(JSON.parse(stdout)).toMatchObject({ added: 1, failed: 0, items: [{ index: 0, status: 'Added' }] });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('imports a bundle with the batch report, one item per object', async () => {
      const bundle = {
        type: 'bundle',
        id: 'bundle--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c10',
        objects: [
          { type: 'ipv4-addr', id: 'ipv4-addr--6b4f3a52-8c5b-5a8e-9d0b-8e8f3f8a1c11', value: '198.51.100.0/24' },
          { type: 'report', id: 'report--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c12' },
        ],
      };
      const response = await t.http().post('/intel/collections/feeds/objects/stix-bundle').set('X-Api-Key', t.adminKey).send(bundle);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        added: 1,
        updated: 0,
        unchanged: 0,
        removed: 0,
        failed: 1,
        items: [
          { index: 0, status: 'Added' },
          { index: 1, status: 'Failed', error: { code: 'StixNotSupported', message: expect.stringMatching(/report/) } },
        ],
      });
      expect((await t.http().post('/intel/collections/feeds/objects/stix-bundle').set('X-Api-Key', t.adminKey).send(bundle)).body).toMatchObject({
        unchanged: 1,
      });
      const text = await t.intel.postAs('text/plain', '/intel/collections/feeds/objects/stix-bundle', '{}');
      expect([text.status, text.body.code]).toEqual([415, 'UnsupportedMediaType']);
      const empty = await t.http().post('/intel/collections/feeds/objects/stix-bundle').set('X-Api-Key', t.adminKey).send({ type: 'bundle', objects: [] });
      expect([empty.status, empty.body.code]).toEqual([400, 'InvalidData']);
    });
  });
});
