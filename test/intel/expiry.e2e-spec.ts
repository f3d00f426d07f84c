import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { WRITER_LOCK_CLASS } from '../../src/database/advisory-locks.js';
import { ExpiryService } from '../../src/intel/expiry.service.js';
import { expectError } from '../support/clients/api-client.js';
import { cursorOf, parseLinks } from '../support/factories.js';
import { DEFAULT_SCORING_VIEW } from '../support/scoring.js';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';
import { createCollection, listAll, listedOf, md5, sha1, unscored, viewOf } from './objects.helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const domain = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'DomainName',
  keys: [{ type: 'DomainName', value: name }],
  context: {},
  ...extra,
});
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

/** Indicator lifecycle: expiresAt, objectTTLSeconds, hiding, the expiry job and its Remove (Expired) changes. */
describe('object expiry', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    // The job never runs by itself here: the tests run it, on both instances at once.
    [a, b] = await createInstances(2, { EXPIRY_INTERVAL_SECONDS: '3600' });
  });
  afterAll(() => closeInstances([a, b]));

  const add = (collection: string, body: object) => a.http().post(`/intel/collections/${collection}/objects`).set('X-Api-Key', a.adminKey).send(body);
  const remove = (collection: string, value: string) =>
    a.http().delete(`/intel/collections/${collection}/objects?objectKeyType=DomainName&objectKey=${value}`).set('X-Api-Key', a.adminKey);
  const changesAfter = async (collection: string, cursor: string) => {
    const response = await a.http().get(`/intel/collections/${collection}/objects/changes?cursor=${cursor}&limit=1000`).set('X-Api-Key', a.adminKey);
    expect(response.status).toBe(200);
    return response.body as { operation: string; reason?: string; object: { keys: { value: string }[]; expiresAt?: string } }[];
  };
  const runJobOnBoth = () => Promise.all([a.app.get(ExpiryService).expireDue(), b.app.get(ExpiryService).expireDue()]);
  /** Resolves once `count` backends of the database wait for a lock. */
  const untilBlocked = async (count: number) => {
    const blocked = async () =>
      (
        (await a.db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND cardinality(pg_blocking_pids(pid)) > 0`))
          .rows[0] as { n: number }
      ).n;
    while ((await blocked()) < count) await sleep(10);
  };
  /**
   * A raw transaction that runs `hold` and keeps what it took while `start` sends writes that wait for it,
   * until past `until`; then it commits. The writes' statuses, in the order they were sent.
   */
  const heldAcross = async (
    hold: string,
    values: unknown[],
    until: string,
    start: (send: (write: PromiseLike<{ status: number }>) => void) => Promise<void>,
  ): Promise<number[]> => {
    const holder = new pg.Client({ connectionString: a.databaseUrl });
    await holder.connect();
    const writes: Promise<{ status: number }>[] = [];
    try {
      await holder.query('BEGIN');
      await holder.query(hold, values);
      await start((write) => writes.push(Promise.resolve(write)));
      await sleep(Date.parse(until) - Date.now() + 100);
      await holder.query('COMMIT');
      return (await Promise.all(writes)).map((response) => response.status);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await Promise.allSettled(writes);
    }
  };
  /** Each object's own records, by its keys (the order between objects depends on which waiting writer went first). */
  const summaries = (changes: { operation: string; reason?: string; object: object }[]) => {
    const byObject = new Map<string, string[]>();
    for (const change of changes) {
      const object = change.object as { keys: { value: string }[]; context: Record<string, unknown> };
      const name = object.keys.map((key) => key.value).join('+');
      byObject.set(name, [...(byObject.get(name) ?? []), `${change.operation}${change.reason ? `(${change.reason})` : ''} ${JSON.stringify(object.context)}`]);
    }
    return Object.fromEntries(byObject);
  };

  it('refuses an expiresAt that is malformed or not in the future, changing nothing', async () => {
    await createCollection(a, 'bad-expiry');
    const bad = [
      '2020-01-01T00:00:00Z',
      inMs(-1000),
      '2030-13-01T00:00:00Z',
      '2031-02-29T00:00:00Z',
      '2030-01-01',
      '2030-01-01T00:00:00',
      '2030-01-01 00:00:00Z',
      'tomorrow',
      1893456000,
      '2030-01-01T24:00:00Z',
      '2030-01-01T00:00:00+24:00',
    ];
    for (const expiresAt of bad) {
      expectError(await add('bad-expiry', domain('bad.example', { expiresAt })), 'InvalidData');
    }
    expect((await listAll(a, 'bad-expiry')).objects).toEqual([]);
  });

  it('shows expiresAt (UTC, milliseconds) in listings and the feed; an offset is converted', async () => {
    await createCollection(a, 'shown');
    const { changesCursor } = await listAll(a, 'shown');
    expect((await add('shown', domain('later.example', { expiresAt: '2099-06-01T12:00:00.123456+02:00' }))).status).toBe(204);
    expect((await add('shown', domain('never.example'))).status).toBe(204);
    const { objects } = await listAll(a, 'shown');
    expect(objects).toEqual([listedOf(domain('later.example', { expiresAt: '2099-06-01T10:00:00.123Z' })), listedOf(domain('never.example'))]);
    const changes = await changesAfter('shown', changesCursor);
    expect(changes.map((change) => change.object)).toEqual(objects.map(unscored));
    // Re-sending the same expiry is a no-op; a new one is an Update.
    expect((await add('shown', domain('later.example', { expiresAt: '2099-06-01T10:00:00.123Z' }))).status).toBe(204);
    expect((await add('shown', domain('later.example', { expiresAt: '2099-07-01T00:00:00Z' }))).status).toBe(204);
    const next = await changesAfter('shown', changesCursor);
    expect(next.slice(2).map((change) => [change.operation, change.object.expiresAt])).toEqual([['Update', '2099-07-01T00:00:00.000Z']]);
  });

  it('hides an expired object at once, removes it exactly once with two instances running the job, and a re-add is an Add', async () => {
    await createCollection(a, 'lifecycle');
    const { changesCursor } = await listAll(a, 'lifecycle');
    const soon = inMs(1000);
    for (const name of ['e1.example', 'e2.example', 'e3.example', 'again.example', 'gone.example']) {
      expect((await add('lifecycle', domain(name, { expiresAt: soon }))).status).toBe(204);
    }
    expect((await add('lifecycle', domain('kept.example'))).status).toBe(204);
    expect((await remove('lifecycle', 'kept.example')).status).toBe(204);
    expect((await add('lifecycle', domain('kept.example'))).status).toBe(204);
    await sleep(Date.parse(soon) - Date.now() + 50);

    // Gone from the listing before any job ran; deleting it is deleting nothing.
    expect((await listAll(a, 'lifecycle')).objects).toEqual([listedOf(domain('kept.example'))]);
    expect((await remove('lifecycle', 'gone.example')).status).toBe(204);
    // Its keys are free again: the expired object is removed first (Expired), then created anew.
    expect((await add('lifecycle', domain('again.example'))).status).toBe(204);

    await runJobOnBoth();
    await runJobOnBoth();
    const changes = await changesAfter('lifecycle', changesCursor);
    const summary = changes.map((change) => `${change.operation}${change.reason ? `(${change.reason})` : ''} ${change.object.keys[0].value}`);
    expect(summary.slice(0, 8)).toEqual([
      'Add e1.example',
      'Add e2.example',
      'Add e3.example',
      'Add again.example',
      'Add gone.example',
      'Add kept.example',
      'Remove(Deleted) kept.example',
      'Add kept.example',
    ]);
    expect(summary.slice(8, 10)).toEqual(['Remove(Expired) again.example', 'Add again.example']);
    expect(summary.slice(10).sort()).toEqual(
      ['Remove(Expired) e1.example', 'Remove(Expired) e2.example', 'Remove(Expired) e3.example', 'Remove(Expired) gone.example'].sort(),
    );
    // The Remove carries the object's last state, expiry included.
    expect(changes[8].object.expiresAt).toBe(soon);
    expect((await listAll(a, 'lifecycle')).objects).toEqual([listedOf(domain('kept.example')), listedOf(domain('again.example'))]);
  });

  it('objectTTLSeconds: set at registration and by PATCH with tag rules; objects expire that long after their last add', async () => {
    const schema = await a.http().post('/intel/schemas').set('X-Api-Key', a.adminKey).send({ schemaID: 'ttl-any', type: 'object' });
    expect(schema.status).toBe(201);
    for (const objectTTLSeconds of [0, -1, 1.5, '60', 2 ** 31, true]) {
      const refused = await a.http().post('/intel/collections').set('X-Api-Key', a.adminKey).send({ name: 'ttl', schemaID: 'ttl-any', objectTTLSeconds });
      expectError(refused, 'InvalidData');
    }
    const created = await a.http().post('/intel/collections').set('X-Api-Key', a.adminKey).send({ name: 'ttl', schemaID: 'ttl-any', objectTTLSeconds: 3600 });
    expect(created.status).toBe(201);
    const view = await a.http().get('/intel/collections/ttl').set('X-Api-Key', a.adminKey);
    expect(view.body).toEqual({ name: 'ttl', schemaID: 'ttl-any', objectTTLSeconds: 3600, defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
    const patch = (body: object, tag: string) => a.http().patch('/intel/collections/ttl').set('X-Api-Key', a.adminKey).set('If-Match', tag).send(body);
    const tagOf = async () => (await a.http().get('/intel/collections/ttl').set('X-Api-Key', a.adminKey)).headers.etag as string;

    // The same value keeps the tag; a change moves it; a stale tag is refused; bad values change nothing.
    const tag1 = view.headers.etag as string;
    expect((await patch({ objectTTLSeconds: 3600 }, tag1)).status).toBe(204);
    expect(await tagOf()).toBe(tag1);
    expectError(await patch({ objectTTLSeconds: 0 }, tag1), 'InvalidData');
    expect((await patch({ objectTTLSeconds: 2 }, tag1)).status).toBe(204);
    const tag2 = await tagOf();
    expect(tag2).not.toBe(tag1);
    expectError(await patch({ objectTTLSeconds: 5 }, tag1), 'ResourceModified');

    const { changesCursor } = await listAll(a, 'ttl');
    const before = Date.now();
    expect((await add('ttl', domain('ttl.example'))).status).toBe(204);
    const [listed] = (await listAll(a, 'ttl')).objects as { expiresAt?: string }[];
    const expiresAt = Date.parse(listed.expiresAt!);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 2000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 2000 + 1000);
    // Its own expiresAt wins over the time to live.
    expect((await add('ttl', domain('own.example', { expiresAt: '2099-01-01T00:00:00Z' }))).status).toBe(204);

    // Re-adding moves the expiry: an Update. `null` clears the TTL for later writes.
    await sleep(5);
    expect((await add('ttl', domain('ttl.example'))).status).toBe(204);
    expect((await patch({ objectTTLSeconds: null }, tag2)).status).toBe(204);
    expect((await a.http().get('/intel/collections/ttl').set('X-Api-Key', a.adminKey)).body).toEqual({
      name: 'ttl',
      schemaID: 'ttl-any',
      defaultTLP: 'TLP:CLEAR',
      scoring: DEFAULT_SCORING_VIEW,
    });
    expect((await add('ttl', domain('forever.example'))).status).toBe(204);

    await sleep(2100);
    await runJobOnBoth();
    const summary = (await changesAfter('ttl', changesCursor)).map(
      (change) => `${change.operation}${change.reason ? `(${change.reason})` : ''} ${change.object.keys[0].value}`,
    );
    expect(summary).toEqual(['Add ttl.example', 'Add own.example', 'Update ttl.example', 'Add forever.example', 'Remove(Expired) ttl.example']);
    const remaining = (await listAll(a, 'ttl')).objects;
    expect(remaining).toEqual([listedOf(domain('own.example', { expiresAt: '2099-01-01T00:00:00.000Z' })), listedOf(domain('forever.example'))]);
  });

  it('lookup, network search and batches honour expiry; a batch re-add of an expired object is an Add', async () => {
    await createCollection(a, 'batched');
    const { changesCursor } = await listAll(a, 'batched');
    const soon = inMs(800);
    const batch = (items: object[]) => a.http().post('/intel/collections/batched/objects/batch').set('X-Api-Key', a.adminKey).send(items);
    const ip = (value: string, extra: Record<string, unknown> = {}) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value }], context: {}, ...extra });
    const added = await batch([
      ip('192.0.2.1', { expiresAt: soon }),
      ip('192.0.2.2', { expiresAt: '2099-01-01T00:00:00Z' }),
      ip('192.0.2.3', { expiresAt: 'soon' }),
    ]);
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ added: 2, failed: 1 });
    expect(added.body.items[2].error.code).toBe('InvalidData');
    const lookup = () =>
      a
        .http()
        .post('/intel/lookup')
        .set('X-Api-Key', a.adminKey)
        .send({ keys: [{ type: 'IPAddress', value: '192.0.2.1' }], collections: ['batched'] });
    const network = () => a.http().get('/intel/collections/batched/objects/network?within=192.0.2.0/24').set('X-Api-Key', a.adminKey);
    expect((await lookup()).body[0].matches).toEqual([{ collection: 'batched', object: listedOf(ip('192.0.2.1', { expiresAt: soon })), sightings: null }]);
    expect((await network()).body).toHaveLength(2);

    await sleep(Date.parse(soon) - Date.now() + 50);
    expect((await lookup()).body[0].matches).toEqual([]);
    expect((await network()).body).toEqual([viewOf(ip('192.0.2.2', { expiresAt: '2099-01-01T00:00:00.000Z' }))]);
    // Re-added by a batch before the job ran: removed (Expired), then created anew.
    expect((await batch([ip('192.0.2.1')])).body).toMatchObject({ added: 1 });
    await runJobOnBoth();
    const summary = (await changesAfter('batched', changesCursor)).map(
      (change) => `${change.operation}${change.reason ? `(${change.reason})` : ''} ${change.object.keys[0].value}`,
    );
    expect(summary).toEqual(['Add 192.0.2.1', 'Add 192.0.2.2', 'Remove(Expired) 192.0.2.1', 'Add 192.0.2.1']);
  });

  it('a write that waits for another writer of its object across the expiry finds it expired: expired and added anew, never extended or deleted', async () => {
    await createCollection(a, 'expires-waiting');
    const file = (keys: { type: string; value: string }[], extra: Record<string, unknown> = {}) => ({ type: 'File', keys, context: {}, ...extra });
    const md5Key = { type: 'MD5Hash', value: md5(7) };
    const sha1Key = { type: 'SHA1Hash', value: sha1(7) };
    const { changesCursor } = await listAll(a, 'expires-waiting');
    const soon = inMs(3000);
    expect((await add('expires-waiting', domain('held.example', { expiresAt: soon }))).status).toBe(204);
    expect((await add('expires-waiting', domain('deleted.example', { expiresAt: soon }))).status).toBe(204);
    expect((await add('expires-waiting', file([md5Key], { expiresAt: soon }))).status).toBe(204);
    const gone = inMs(200);
    expect((await add('expires-waiting', file([sha1Key], { expiresAt: gone }))).status).toBe(204);
    await sleep(Date.parse(gone) - Date.now() + 50);

    // Another writer of the first three objects, in flight across their expiry: a raw transaction that has
    // written their rows (as an add keeping their expiry would), so the service's writes wait for it and then
    // check the rows' new versions (a row only locked, never written, is not checked again by PostgreSQL;
    // no statement of the service locks an object's row without writing it).
    const statuses = await heldAcross(
      `UPDATE intel_object o SET context = o.context FROM intel_object_key k WHERE k.object_id = o.id AND k.value = ANY($1::text[])`,
      [['held.example', 'deleted.example', md5Key.value]],
      soon,
      async (send) => {
        // A merge with the expired object's key: decided under the collection's exclusive lock (an expired
        // object is removed first), it plans an update of the MD5 object and waits for its row.
        send(add('expires-waiting', file([md5Key, sha1Key])));
        await untilBlocked(1);
        // A single update and a single delete, decided while their objects are live, then waiting.
        send(add('expires-waiting', domain('held.example', { context: { size: 1 } })));
        await untilBlocked(2);
        send(remove('expires-waiting', 'deleted.example'));
        await untilBlocked(3);
      },
    );
    expect(statuses).toEqual([204, 204, 204]);
    await runJobOnBoth();

    expect(summaries(await changesAfter('expires-waiting', changesCursor))).toEqual({
      'held.example': ['Add {}', 'Remove(Expired) {}', 'Add {"size":1}'],
      'deleted.example': ['Add {}', 'Remove(Expired) {}'],
      [md5Key.value]: ['Add {}', 'Remove(Expired) {}'],
      [sha1Key.value]: ['Add {}', 'Remove(Expired) {}'],
      [`${md5Key.value}+${sha1Key.value}`]: ['Add {}'],
    });
  });

  it('a single write that waits for the collection lock (a batch running) across the expiry finds its object expired', async () => {
    await createCollection(a, 'expires-locked');
    const { changesCursor } = await listAll(a, 'expires-locked');
    const soon = inMs(3000);
    expect((await add('expires-locked', domain('updated.example', { expiresAt: soon }))).status).toBe(204);
    expect((await add('expires-locked', domain('deleted.example', { expiresAt: soon }))).status).toBe(204);
    // What a batch holds while it runs: the collection's writer lock, exclusively, and none of these rows.
    const statuses = await heldAcross(
      `SELECT pg_advisory_xact_lock($1, id) FROM intel_collection WHERE name = 'expires-locked'`,
      [WRITER_LOCK_CLASS],
      soon,
      async (send) => {
        // Both are decided while their objects are live (the unlocked pre-check), then wait for the lock.
        send(add('expires-locked', domain('updated.example', { context: { size: 2 } })));
        send(remove('expires-locked', 'deleted.example'));
        await untilBlocked(2);
      },
    );
    expect(statuses).toEqual([204, 204]);
    await runJobOnBoth();
    expect(summaries(await changesAfter('expires-locked', changesCursor))).toEqual({
      'updated.example': ['Add {}', 'Remove(Expired) {}', 'Add {"size":2}'],
      'deleted.example': ['Add {}', 'Remove(Expired) {}'],
    });
  });

  it('wakes a long-polling follower with the expiry', async () => {
    await createCollection(a, 'woken');
    const soon = inMs(500);
    expect((await add('woken', domain('short.example', { expiresAt: soon }))).status).toBe(204);
    const { changesCursor } = await listAll(a, 'woken');
    const waiting = b
      .http()
      .get(`/intel/collections/woken/objects/changes?cursor=${changesCursor}&wait=30`)
      .set('X-Api-Key', b.adminKey)
      .then((response) => response);
    await sleep(Date.parse(soon) - Date.now() + 50);
    await a.app.get(ExpiryService).expireDue();
    const response = await waiting;
    expect(response.body).toEqual([{ operation: 'Remove', reason: 'Expired', object: viewOf(domain('short.example', { expiresAt: soon })) }]);
    expect(cursorOf(parseLinks(response.headers.link as string).next)).toEqual(expect.any(String));
  });
});
