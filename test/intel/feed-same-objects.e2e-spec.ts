import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';
import {
  canonical,
  createCollection,
  follow,
  followAll,
  listAll,
  md5,
  replay,
  sha1,
  unscoredAll,
  type ChangeBody,
  type ObjectViewBody,
} from './objects.helpers.js';

/** Few objects, so that nearly every write hits an object other clients are writing at the same moment. */
const POOL = 3;
const WRITERS = 9;
const OPERATIONS_PER_WRITER = 20;

/** Who wrote an Add/Update: writer, operation, item within a batch (0 for single writes). Unique per write. */
interface Origin {
  w: number;
  op: number;
  i: number;
}

const originOf = (object: ObjectViewBody) => object.context as unknown as Origin;
const originKey = ({ w, op, i }: Origin) => `${w}/${op}/${i}`;

/** Adds, through `app`, the File object with MD5 key `md5(n)` that a workload starts from (origin `{ w: -1, op: n, i: 0 }`). */
const addInitialFile = (app: TestApp, collection: string, n: number) =>
  app
    .http()
    .post(`/intel/collections/${collection}/objects`)
    .set('X-Api-Key', app.adminKey)
    .send({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context: { w: -1, op: n, i: 0 } })
    .expect(204);

/** A writer's reproducible random numbers in [0, 1): a linear congruential generator started at `seed`. */
function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

/**
 * Runs `work` while one follower per instance polls the feed from `cursor` as the SDK does (holding empty
 * pages with `wait`), then reads the whole feed once more from the first instance: every follower must
 * have seen exactly that feed (no gap, no repeat).
 */
async function whileFollowed<Result>(
  apps: TestApp[],
  collection: string,
  cursor: string,
  work: () => Promise<Result>,
): Promise<{ results: Result; feed: ChangeBody[] }> {
  let done = false;
  const following = apps.map((app) => follow(app, collection, cursor, () => done, { limit: 5, longPoll: true }));
  const results = await work();
  done = true;
  const seen = await Promise.all(following);
  const { changes: feed } = await followAll(apps[0], collection, cursor, 1000);
  for (const followed of seen) expect(followed).toEqual(feed);
  return { results, feed };
}

/**
 * Clients write the SAME few objects concurrently, through `apps` (one instance, or two sharing a
 * database): single adds (each an Add or an Update, every context unique), single deletes, and batches
 * mixing both. Followers poll the feed meanwhile (one per instance, with long-polls on empty pages).
 * What must hold afterwards:
 * - every follower saw exactly the feed (no gap, no repeat), and every write that changed an object
 *   appears in it exactly once;
 * - per object, the changes follow its commit order (an Add only while absent, Update and Remove only
 *   while present), and each client's own writes appear in the order it made them;
 * - the first snapshot replayed with the feed is the collection, so each object's final state equals its
 *   last change.
 */
async function sameObjectsWorkload(apps: TestApp[], collection: string): Promise<void> {
  const first = apps[0];
  const path = (app: TestApp) => `${app.url}/intel/collections/${collection}/objects`;
  const headers = { 'X-Api-Key': first.adminKey, 'Content-Type': 'application/json' };
  for (let n = 0; n < POOL; n += 2) {
    await addInitialFile(first, collection, n);
  }
  const snapshot = await listAll(first, collection, 2);

  /** The origins of the writes that changed an object (an add always does: its context is new). */
  async function writer(id: number): Promise<Origin[]> {
    const app = apps[id % apps.length];
    const changed: Origin[] = [];
    const random = seededRandom(id * 7919 + 17);
    type Key = { type: string; value: string };
    const item = (op: number, i: number): { remove: Key } | { type: string; keys: Key[]; context: Origin } => {
      const key = { type: 'MD5Hash', value: md5(Math.floor(random() * POOL)) };
      return random() < 0.25 ? { remove: key } : { type: 'File', keys: [key], context: { w: id, op, i } };
    };
    for (let op = 0; op < OPERATIONS_PER_WRITER; op++) {
      if (id % 3 === 0) {
        const items = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, i) => item(op, i + 1));
        const response = await fetch(`${path(app)}/batch`, { method: 'POST', headers, body: JSON.stringify(items) });
        expect(response.status).toBe(200);
        const report = (await response.json()) as { items: { status: string }[] };
        report.items.forEach(({ status }, index) => {
          expect(['Added', 'Updated', 'Removed', 'Absent']).toContain(status);
          if (status === 'Added' || status === 'Updated') changed.push({ w: id, op, i: index + 1 });
        });
        continue;
      }
      const single = item(op, 0);
      const response =
        'remove' in single
          ? await fetch(`${path(app)}?objectKeyType=MD5Hash&objectKey=${single.remove.value}`, { method: 'DELETE', headers })
          : await fetch(path(app), { method: 'POST', headers, body: JSON.stringify(single) });
      expect(response.status).toBe(204);
      if (!('remove' in single)) changed.push({ w: id, op, i: 0 });
    }
    return changed;
  }

  const { results, feed } = await whileFollowed(apps, collection, snapshot.changesCursor, () =>
    Promise.all(Array.from({ length: WRITERS }, (_, id) => writer(id))),
  );
  const changed = results.flat();

  // Exactly once: the Adds and Updates are the changing writes, each once.
  const written = feed.filter((change) => change.operation !== 'Remove').map((change) => originKey(originOf(change.object)));
  expect(new Set(written).size).toBe(written.length);
  expect([...written].sort()).toEqual(changed.map(originKey).sort());
  expect(feed.some((change) => change.operation === 'Remove')).toBe(true);

  // Per object, commit order: its lifecycle alternates, starting from the snapshot.
  for (let n = 0; n < POOL; n++) {
    let present = snapshot.objects.some((object) => object.keys[0].value === md5(n));
    for (const change of feed.filter((c) => c.object.keys[0].value === md5(n))) {
      expect({ object: n, operation: change.operation, present }).toEqual({ object: n, operation: change.operation, present: change.operation !== 'Add' });
      present = change.operation !== 'Remove';
    }
  }
  // Each client's writes in the order it made them (one finished before the next began).
  for (let id = 0; id < WRITERS; id++) {
    const own = feed.map((change) => originOf(change.object)).filter((origin, index) => feed[index].operation !== 'Remove' && origin.w === id);
    const ordered = [...own].sort((a, b) => a.op - b.op || a.i - b.i);
    expect(own).toEqual(ordered);
  }

  const fresh = await listAll(first, collection, 2);
  expect(canonical(replay(unscoredAll(snapshot.objects), feed))).toEqual(canonical(unscoredAll(fresh.objects)));
}

/** Objects every update writer may write; 0 to UPDATE_POOL - 3 are each mostly one writer's, the last two everyone's. */
const UPDATE_POOL = 8;
const UPDATE_WRITERS = 8;
const UPDATES_PER_WRITER = 12;

/**
 * Concurrent UPDATES through `apps`: the objects exist, so almost every add updates or merges (adds the
 * object's own SHA1 key, which never conflicts), on different objects and on the same ones, beside a
 * batch writer updating the same objects and a writer deleting and re-adding two other objects. Beyond
 * the feed's rules (each change once, per object in commit order, replay = listing): a key merged into an
 * object is never lost to an update that was decided on the object's older keys.
 */
async function updatesWorkload(apps: TestApp[], collection: string): Promise<void> {
  const first = apps[0];
  const path = (app: TestApp) => `${app.url}/intel/collections/${collection}/objects`;
  const headers = { 'X-Api-Key': first.adminKey, 'Content-Type': 'application/json' };
  for (let n = 0; n < UPDATE_POOL; n++) {
    await addInitialFile(first, collection, n);
  }
  const snapshot = await listAll(first, collection, 3);
  const churn = [md5(100), md5(101)];

  async function writer(id: number): Promise<Origin[]> {
    const app = apps[id % apps.length];
    const changed: Origin[] = [];
    const random = seededRandom(id * 104729 + 3);
    const update = (op: number, i: number) => {
      const n = random() < 0.5 ? id % (UPDATE_POOL - 2) : UPDATE_POOL - 2 + Math.floor(random() * 2);
      const keys = [{ type: 'MD5Hash', value: md5(n) }];
      if (random() < 0.3) keys.push({ type: 'SHA1Hash', value: sha1(n) });
      return { type: 'File', keys, context: { w: id, op, i } };
    };
    for (let op = 0; op < UPDATES_PER_WRITER; op++) {
      if (id === UPDATE_WRITERS - 1) {
        const items = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => update(op, i + 1));
        const response = await fetch(`${path(app)}/batch`, { method: 'POST', headers, body: JSON.stringify(items) });
        expect(response.status).toBe(200);
        const report = (await response.json()) as { items: { status: string }[] };
        report.items.forEach(({ status }, index) => {
          expect(status).toBe('Updated');
          changed.push({ w: id, op, i: index + 1 });
        });
        continue;
      }
      if (id === UPDATE_WRITERS - 2) {
        const key = churn[op % 2];
        const response =
          op % 4 < 2
            ? await fetch(path(app), { method: 'POST', headers, body: JSON.stringify({ type: 'File', keys: [{ type: 'MD5Hash', value: key }], context: {} }) })
            : await fetch(`${path(app)}?objectKeyType=MD5Hash&objectKey=${key}`, { method: 'DELETE', headers });
        expect(response.status).toBe(204);
        continue;
      }
      const response = await fetch(path(app), { method: 'POST', headers, body: JSON.stringify(update(op, 0)) });
      expect(response.status).toBe(204);
      changed.push({ w: id, op, i: 0 });
    }
    return changed;
  }

  const { results, feed } = await whileFollowed(apps, collection, snapshot.changesCursor, () =>
    Promise.all(Array.from({ length: UPDATE_WRITERS }, (_, id) => writer(id))),
  );
  const pooled = feed.filter((change) => !churn.includes(change.object.keys[0].value));
  // Every update once (each context is new, so each add changed its object), and only updates.
  expect(pooled.every((change) => change.operation === 'Update')).toBe(true);
  expect(pooled.map((change) => originKey(originOf(change.object))).sort()).toEqual(results.flat().map(originKey).sort());
  for (let n = 0; n < UPDATE_POOL; n++) {
    const own = pooled.filter((change) => change.object.keys[0].value === md5(n));
    // Once merged, the SHA1 key stays in every later change of the object.
    const merged = own.findIndex((change) => change.object.keys.length === 2);
    if (merged >= 0) expect(own.slice(merged).map((change) => change.object.keys.length)).toEqual(own.slice(merged).map(() => 2));
    // Each writer's updates of the object in the order it made them.
    for (let id = 0; id < UPDATE_WRITERS; id++) {
      const mine = own.map((change) => originOf(change.object)).filter((origin) => origin.w === id);
      expect(mine).toEqual([...mine].sort((a, b) => a.op - b.op || a.i - b.i));
    }
  }
  // The churned objects: Add only while absent, Remove only while present.
  for (const key of churn) {
    const lifecycle = feed.filter((change) => change.object.keys[0].value === key).map((change) => change.operation);
    lifecycle.forEach((operation, index) => expect(operation).toBe(index % 2 === 0 ? 'Add' : 'Remove'));
  }
  const fresh = await listAll(first, collection, 3);
  expect(canonical(replay(unscoredAll(snapshot.objects), feed))).toEqual(canonical(unscoredAll(fresh.objects)));
}

describe('change feed: concurrent writes of the same objects', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await createInstances(2);
  });
  afterAll(() => closeInstances([a, b]));

  it('one instance: single writes, batches and deletes of the same objects; a follower sees each change once, per object in commit order', async () => {
    await createCollection(a, 'same-one');
    await sameObjectsWorkload([a], 'same-one');
  });

  it('concurrent adds of one new object naming its keys in opposite orders: all succeed, one Add each', async () => {
    await createCollection(a, 'same-keys');
    const { changesCursor } = await listAll(a, 'same-keys');
    const pairs = Array.from({ length: 6 }, (_, n) => [
      { type: 'MD5Hash', value: md5(1000 + n) },
      { type: 'SHA1Hash', value: sha1(1000 + n) },
    ]);
    const responses = await Promise.all(
      pairs.flatMap((keys) =>
        Array.from({ length: 6 }, (_, i) =>
          fetch(`${a.url}/intel/collections/same-keys/objects`, {
            method: 'POST',
            headers: { 'X-Api-Key': a.adminKey, 'Content-Type': 'application/json' },
            body: JSON.stringify({ type: 'File', keys: i % 2 === 0 ? keys : [...keys].reverse(), context: {} }),
          }),
        ),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(36).fill(204));
    const { changes } = await followAll(a, 'same-keys', changesCursor, 100);
    expect(changes.map((change) => change.operation)).toEqual(Array(6).fill('Add'));
  });

  it('two instances on one database writing one collection: both followers see the same gap-free feed', async () => {
    await createCollection(a, 'same-two');
    await sameObjectsWorkload([a, b], 'same-two');
  });
  it('two instances: concurrent updates and merges of different and of the same objects, beside batches and deletes', async () => {
    await createCollection(a, 'updates-two');
    await updatesWorkload([a, b], 'updates-two');
  });

  it('two instances racing to give one new key to two different objects: one update wins, the other is a KeySetConflict', async () => {
    const ROUNDS = 10;
    await createCollection(a, 'key-race');
    for (let r = 0; r < ROUNDS; r++) {
      for (const n of [200 + r, 300 + r]) {
        await a
          .http()
          .post('/intel/collections/key-race/objects')
          .set('X-Api-Key', a.adminKey)
          .send({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context: {} })
          .expect(204);
      }
    }
    const { changesCursor } = await listAll(a, 'key-race', 100);
    const give = (app: TestApp, owner: number, r: number) =>
      fetch(`${app.url}/intel/collections/key-race/objects`, {
        method: 'POST',
        headers: { 'X-Api-Key': app.adminKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          type: 'File',
          keys: [
            { type: 'MD5Hash', value: md5(owner) },
            { type: 'SHA1Hash', value: sha1(500 + r) },
          ],
          context: { r },
        }),
      }).then(async (response) => `${response.status}${response.status === 204 ? '' : ` ${((await response.json()) as { code: string }).code}`}`);
    const outcomes = await Promise.all(Array.from({ length: ROUNDS }, (_, r) => Promise.all([give(a, 200 + r, r), give(b, 300 + r, r)])));
    for (const pair of outcomes) expect([...pair].sort()).toEqual(['204', '422 KeySetConflict']);
    const { changes } = await followAll(a, 'key-race', changesCursor, 100);
    const { objects } = await listAll(a, 'key-race', 100);
    for (let r = 0; r < ROUNDS; r++) {
      const holds = (object: ObjectViewBody) => object.keys.some((key) => key.value === sha1(500 + r));
      expect(objects.filter(holds)).toHaveLength(1);
      expect(changes.filter((change) => holds(change.object)).map((change) => change.operation)).toEqual(['Update']);
    }
  });
});
