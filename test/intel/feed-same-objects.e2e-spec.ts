import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { type ChangeBody, canonical, createCollection, followAll, listAll, md5, type ObjectViewBody, replay, sha1 } from './objects.helpers.js';

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
    await first.http().post(`/intel/collections/${collection}/objects`).set('X-Api-Key', first.adminKey)
      .send({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context: { w: -1, op: n, i: 0 } }).expect(204);
  }
  const snapshot = await listAll(first, collection, 2);

  /** The origins of the writes that changed an object (an add always does: its context is new). */
  async function writer(id: number): Promise<Origin[]> {
    const app = apps[id % apps.length];
    const changed: Origin[] = [];
    let seed = id * 7919 + 17;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
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

  /** Polls as the SDK does, holding empty pages with `wait`, until told to stop and the feed is drained. */
  async function follower(app: TestApp, done: () => boolean): Promise<ChangeBody[]> {
    const seen: ChangeBody[] = [];
    let saved = snapshot.changesCursor;
    for (;;) {
      const finished = done();
      const response = await fetch(`${path(app)}/changes?cursor=${saved}&limit=5${finished ? '' : '&wait=1'}`, { headers });
      expect(response.status).toBe(200);
      const page = (await response.json()) as ChangeBody[];
      const next = parseLinks(response.headers.get('link') ?? undefined).next;
      expect(next !== undefined).toBe(page.length > 0);
      seen.push(...page);
      if (next) saved = cursorOf(next) as string;
      if (page.length === 0 && finished) return seen;
    }
  }

  let writersDone = false;
  const following = apps.map((app) => follower(app, () => writersDone));
  const changed = (await Promise.all(Array.from({ length: WRITERS }, (_, id) => writer(id)))).flat();
  writersDone = true;
  const seen = await Promise.all(following);

  // The whole feed, read afterwards from the first instance in one go.
  const feed: ChangeBody[] = [];
  let next: string | undefined = `/intel/collections/${collection}/objects/changes?cursor=${snapshot.changesCursor}&limit=1000`;
  while (next) {
    const response: { body: unknown; headers: Record<string, string> } = await first.http().get(next).set('X-Api-Key', first.adminKey);
    const page = response.body as ChangeBody[];
    feed.push(...page);
    next = page.length > 0 ? parseLinks(response.headers.link).next : undefined;
  }
  for (const followed of seen) expect(followed).toEqual(feed);

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
  expect(canonical(replay(snapshot.objects, feed))).toEqual(canonical(fresh.objects));
}

describe('change feed: concurrent writes of the same objects', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({}, a);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

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
});
