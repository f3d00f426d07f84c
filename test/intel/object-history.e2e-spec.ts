import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChangesService } from '../../src/intel/changes.service.js';
import { expectError } from '../support/clients/intel.js';
import { createKey, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, resourceIdOf } from '../taxii/taxii-support.js';
import { viewOf } from './objects.helpers.js';
import { domain, UUID, writableCollection, type writePaths } from './write-paths.helpers.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Entry {
  position: number;
  at: string;
  operation: string;
  reason: string | null;
  keyID: number | null;
  requestID: string | null;
  via: string | null;
  source: string | null;
  obj: { type: string; keys: { type: string; value: string }[]; context: Record<string, unknown>; expiresAt?: string };
}

/**
 * Object history and provenance (extensions §14), and the attribution of every write path as history
 * shows it: who (`keyID`), which request (`requestID`: the client's X-Request-Id or the one answered),
 * how (`via`).
 */
describe('object history and provenance (/intel/collections/{name}/objects/history, /provenance)', () => {
  const collection = 'historic';
  let t: TestApp;
  let writer: { id: number; key: string };
  let paths: ReturnType<typeof writePaths>;

  beforeAll(async () => {
    t = await createTestApp({ EXPIRY_INTERVAL_SECONDS: '3600' });
    ({ writer, paths } = await writableCollection(t, collection));
  });
  afterAll(async () => {
    await t.close();
  });

  const objects = (path = '') => `/intel/collections/${collection}/objects${path}`;
  const keyQuery = (value: string, type = 'DomainName') => `objectKeyType=${type}&objectKey=${encodeURIComponent(value)}`;
  /** Requests with the writer's key (`path` from `objects`, or a Link the service gave). */
  const getAsWriter = (path: string) => t.http().get(path).set('X-Api-Key', writer.key);
  const postAsWriter = (path: string, body: object) => t.http().post(path).set('X-Api-Key', writer.key).send(body);
  const deleteAsWriter = (path: string) => t.http().delete(path).set('X-Api-Key', writer.key);
  const historyOf = (value: string, key = writer.key, name = collection) =>
    t
      .http()
      .get(`/intel/collections/${name}/objects/history?${keyQuery(value)}`)
      .set('X-Api-Key', key);
  const provenanceOf = (value: string, key = writer.key, name = collection) =>
    t
      .http()
      .get(`/intel/collections/${name}/objects/provenance?${keyQuery(value)}`)
      .set('X-Api-Key', key);
  /** Who and how of the entries, newest first. */
  const attribution = async (value: string) => {
    const response = await historyOf(value);
    expect(response.status).toBe(200);
    return (response.body as Entry[]).map(({ operation, reason, keyID, requestID, via, source }) => ({ operation, reason, keyID, requestID, via, source }));
  };
  const byWriter = (operation: string, via: string, requestID: string, reason: string | null = null) => ({
    operation,
    reason,
    keyID: writer.id,
    requestID,
    via,
    source: null,
  });

  it('a single add, update and delete: every field, newest first, with the client X-Request-Id and without', async () => {
    await paths.add(domain('one.example', { context: { n: 1 } }), 'h-add');
    const updated = await paths.add(domain('one.example', { context: { n: 2 } }));
    await paths.remove('DomainName', 'ONE.example.', 'h-remove');

    // The key is normalised as on writes.
    const response = await historyOf('One.Example');
    expect(response.status).toBe(200);
    const entries = response.body as Entry[];
    expect(entries.map(({ position, at, ...rest }) => rest)).toEqual([
      { ...byWriter('Remove', 'api', 'h-remove', 'Deleted'), obj: viewOf(domain('one.example', { context: { n: 2 } })) },
      { ...byWriter('Update', 'api', updated), obj: viewOf(domain('one.example', { context: { n: 2 } })) },
      { ...byWriter('Add', 'api', 'h-add'), obj: viewOf(domain('one.example', { context: { n: 1 } })) },
    ]);
    for (const entry of entries) expect(entry.at).toMatch(ISO_MS);
    const positions = entries.map((entry) => entry.position);
    expect(positions).toEqual([...positions].sort((a, b) => b - a));
  });

  it('a batch, with and without a client X-Request-Id', async () => {
    await paths.batch([domain('two.example')], 'h-batch');
    const generated = await paths.batch([domain('two.example', { context: { b: 2 } }), { remove: { type: 'DomainName', value: 'two.example' } }]);
    expect(await attribution('two.example')).toEqual([
      byWriter('Remove', 'batch', generated, 'Deleted'),
      byWriter('Update', 'batch', generated),
      byWriter('Add', 'batch', 'h-batch'),
    ]);
  });

  it('an import of text and of a STIX bundle', async () => {
    await paths.importText('seen at three-historic[.]com today', 'h-import');
    expect(await attribution('three-historic.com')).toEqual([byWriter('Add', 'import', 'h-import')]);
    const bundle = await paths.importBundle('four.example', 'domain-name--5b7d2d3e-9a57-5f1c-9f6e-0d1c2b3a4f52');
    expect(await attribution('four.example')).toEqual([byWriter('Add', 'import', bundle)]);
  });

  it('TAXII writes: an envelope and an object delete', async () => {
    await paths.taxiiAdd('five.example', 'indicator--6b4f3a52-8c5b-4a8e-9d0b-8e8f3f8a1c12', 'h-taxii');
    const removed = await paths.taxiiDelete('five.example');
    expect(await attribution('five.example')).toEqual([byWriter('Remove', 'taxii', removed, 'Deleted'), byWriter('Add', 'taxii', 'h-taxii')]);
  });

  it("an expiry: the job's, with no key and the run's own id", async () => {
    await paths.addExpiring(domain('six.example'), 'h-expiring');
    const [expired, added] = await attribution('six.example');
    expect(added).toEqual(byWriter('Add', 'api', 'h-expiring'));
    expect(expired).toEqual({ operation: 'Remove', reason: 'Expired', keyID: null, requestID: expect.stringMatching(UUID), via: 'expiry', source: null });
  });

  it('two lives of one key, and the changes of a life from before the key joined it', async () => {
    const add = (form: Record<string, unknown>) => postAsWriter(objects(), form);
    const md5 = 'a'.repeat(32);
    const sha1 = 'b'.repeat(40);
    const file = (keys: { type: string; value: string }[], life: number) => ({ type: 'File', keys, context: { life } });
    expect((await add(file([{ type: 'MD5Hash', value: md5 }], 1))).status).toBe(204);
    // The SHA1 key joins the first life by an update.
    expect(
      (
        await add(
          file(
            [
              { type: 'MD5Hash', value: md5 },
              { type: 'SHA1Hash', value: sha1 },
            ],
            1,
          ),
        )
      ).status,
    ).toBe(204);
    expect((await deleteAsWriter(objects(`?${keyQuery(sha1, 'SHA1Hash')}`))).status).toBe(204);
    expect((await add(file([{ type: 'SHA1Hash', value: sha1 }], 2))).status).toBe(204);

    const history = (type: string, value: string) => getAsWriter(objects(`/history?${keyQuery(value, type)}`));
    const entries = (await history('SHA1Hash', sha1)).body as Entry[];
    expect(entries.map((entry) => [entry.operation, entry.obj.keys.map((key) => key.type), entry.obj.context])).toEqual([
      ['Add', ['SHA1Hash'], { life: 2 }],
      ['Remove', ['MD5Hash', 'SHA1Hash'], { life: 1 }],
      ['Update', ['MD5Hash', 'SHA1Hash'], { life: 1 }],
      ['Add', ['MD5Hash'], { life: 1 }],
    ]);
    // The MD5 key held only the first life.
    expect(((await history('MD5Hash', md5)).body as Entry[]).map((entry) => entry.operation)).toEqual(['Remove', 'Update', 'Add']);
    // Paged newest first with the Link of every list, which carries the key.
    const seen: string[] = [];
    let next: string | undefined = objects(`/history?${keyQuery(sha1, 'SHA1Hash')}&limit=3`);
    while (next !== undefined) {
      const page: { status: number; body: unknown; headers: Record<string, string> } = await getAsWriter(next);
      expect(page.status).toBe(200);
      seen.push(...(page.body as Entry[]).map((entry) => entry.operation));
      next = parseLinks(page.headers.link).next;
    }
    expect(seen).toEqual(['Add', 'Remove', 'Update', 'Add']);
  });

  it('keeps a context of hundreds of KiB whole, also on pages cut by PAGE_MAX_BYTES', async () => {
    const big = { blob: 'x'.repeat(400 * 1024), nested: { list: Array.from({ length: 1000 }, (_, n) => `item-${n}`) } };
    expect((await postAsWriter(objects(), domain('big.example', { context: big }))).status).toBe(204);
    expect((await postAsWriter(objects(), domain('big.example', { context: { ...big, v: 2 } }))).status).toBe(204);
    const entries = (await historyOf('big.example')).body as Entry[];
    expect(entries.map((entry) => entry.obj.context)).toEqual([{ ...big, v: 2 }, big]);

    const small = await createTestApp({ PAGE_MAX_BYTES: String(256 * 1024) }, t);
    try {
      const first = await small
        .http()
        .get(`/intel/collections/${collection}/objects/history?${keyQuery('big.example')}`)
        .set('X-Api-Key', writer.key);
      expect(first.status).toBe(200);
      // One whole entry per page: the second follows the link.
      expect((first.body as Entry[]).map((entry) => entry.obj.context)).toEqual([{ ...big, v: 2 }]);
      const next = parseLinks(first.headers.link as string).next;
      const second = await small.http().get(next).set('X-Api-Key', writer.key);
      expect((second.body as Entry[]).map((entry) => entry.obj.context)).toEqual([big]);
    } finally {
      await small.close();
    }
  });

  it('keeps history HISTORY_RETENTION_DAYS, past the change feed retention', async () => {
    // A collection of its own: the feed is cut before its first record younger than the retention.
    await createCollection(t, 'aging');
    expect((await t.http().post('/intel/collections/aging/objects').set('X-Api-Key', t.adminKey).send(domain('old.example'))).status).toBe(204);
    const age = (days: number) =>
      t.db.query(
        `UPDATE intel_change SET created_at = now() - make_interval(days => $1)
                   WHERE collection_id = (SELECT id FROM intel_collection WHERE name = 'aging')`,
        [days],
      );
    const operations = async () => ((await historyOf('old.example', t.adminKey, 'aging')).body as Entry[]).map((entry) => entry.operation);
    await age(31);
    await t.app.get(ChangesService).prune();
    expect(await operations()).toEqual(['Add']);
    await age(366);
    await t.app.get(ChangesService).prune();
    expect(await operations()).toEqual([]);
  });

  it('answers [] for a key no change mentions, 400 and 422 for a missing or malformed key, 400 for a malformed page', async () => {
    expect((await historyOf('never.example')).body).toEqual([]);
    for (const query of ['objectKeyType=DomainName', 'objectKey=a.example', 'objectKeyType=Nope&objectKey=a.example']) {
      expectError(await getAsWriter(objects(`/history?${query}`)), 'InvalidQueryArgument');
      expectError(await getAsWriter(objects(`/provenance?${query}`)), 'InvalidQueryArgument');
    }
    // A malformed cursor or limit is the caller's error too, never a 500.
    for (const page of ['cursor=not-a-cursor', 'cursor=eyJ0IjoxfQ', 'limit=0', 'limit=many']) {
      expectError(await getAsWriter(objects(`/history?${keyQuery('a.example')}&${page}`)), 'InvalidQueryArgument');
    }
    expectError(await getAsWriter(objects(`/history?${keyQuery('not a host', 'DomainName')}`)), 'InvalidKeyFormat');
    expectError(await getAsWriter(objects(`/provenance?${keyQuery('zz', 'MD5Hash')}`)), 'InvalidKeyFormat');
    expectError(await historyOf('a.example', t.adminKey, 'no-such-collection'), 'NotFound');
    expectError(await provenanceOf('a.example', t.adminKey, 'no-such-collection'), 'NotFound');
  });

  it('provenance: the api claim of the live object, its first and last native write; 404 ObjectNotFound when none', async () => {
    expect((await postAsWriter(objects(), domain('nine.example'))).status).toBe(204);
    expect((await postAsWriter(objects('/batch'), [domain('nine.example', { context: { v: 2 } })])).status).toBe(200);
    // An identical re-send changes nothing, so it is not a later write.
    expect((await postAsWriter(objects(), domain('nine.example', { context: { v: 2 } }))).status).toBe(204);
    const [update, add] = (await historyOf('nine.example')).body as Entry[];
    const response = await provenanceOf('nine.example');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      claims: [{ origin: 'api', source: null, firstSeenAt: add.at, lastSeenAt: update.at }],
      sightings: null,
      warnings: [],
      score: 50,
    });

    expect((await deleteAsWriter(objects(`?${keyQuery('nine.example')}`))).status).toBe(204);
    expectError(await provenanceOf('nine.example'), 'ObjectNotFound');
    expectError(await provenanceOf('never.example'), 'ObjectNotFound');
  });

  it('history and provenance only for collections the key may read: 403 MissingPermissions as other reads', async () => {
    await createCollection(t, 'elsewhere');
    const other = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, 'elsewhere'), actions: ['Read'] }] });
    expect((await postAsWriter(objects(), domain('ten.example'))).status).toBe(204);
    expectError(await historyOf('ten.example', other.key), 'MissingPermissions');
    expectError(await provenanceOf('ten.example', other.key), 'MissingPermissions');
    expect((await historyOf('ten.example', other.key, 'elsewhere')).body).toEqual([]);
    expectError(await provenanceOf('ten.example', other.key, 'elsewhere'), 'ObjectNotFound');
  });
});
