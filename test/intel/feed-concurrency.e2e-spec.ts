import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
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

const WRITERS = 12;
const OPERATIONS_PER_WRITER = 30;
/** Few distinct objects, so that writers keep updating, deleting and re-adding the same ones. */
const POOL = 15;

describe('change feed under concurrent writers', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await createCollection(t, 'busy');
  });
  afterAll(async () => {
    await t.close();
  });

  const base = () => `${t.url}/intel/collections/busy/objects`;
  const headers = () => ({ 'X-Api-Key': t.adminKey, 'Content-Type': 'application/json' });

  /**
   * One writer: a deterministic mix of adds (new objects and updates), merges that may conflict, and deletes.
   * Every third writer sends them as batches of 1–6 items instead, which take the collection's writer lock once for all
   * their changes and so interleave with the single writes.
   */
  async function writer(id: number): Promise<string[]> {
    const statuses: string[] = [];
    let seed = id * 7919 + 1;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const nextItem = (op: number) => {
      const n = Math.floor(random() * POOL);
      const roll = random();
      if (roll < 0.2) return { remove: { type: 'MD5Hash', value: md5(n) } } as const;
      // Some adds also carry a SHA1 key, which may belong to another object already (KeySetConflict).
      const keys = [{ type: 'MD5Hash', value: md5(n) }];
      if (roll > 0.85) keys.push({ type: 'SHA1Hash', value: sha1(Math.floor(random() * POOL)) });
      return { type: 'File', keys, context: { writer: id, op, size: op } };
    };
    for (let op = 0; op < OPERATIONS_PER_WRITER; op++) {
      let response: Response;
      if (id % 3 === 0) {
        const items = Array.from({ length: 1 + Math.floor(random() * 6) }, () => nextItem(op));
        response = await fetch(`${base()}/batch`, { method: 'POST', headers: headers(), body: JSON.stringify(items) });
        const report = (await response.json()) as { items: { status: string; error?: { code: string } }[] };
        statuses.push(...report.items.map((item) => (item.error ? `422 ${item.error.code}` : '204')));
        continue;
      }
      const item = nextItem(op);
      if (item.remove) {
        response = await fetch(`${base()}?objectKeyType=MD5Hash&objectKey=${item.remove.value}`, { method: 'DELETE', headers: headers() });
      } else {
        response = await fetch(base(), { method: 'POST', headers: headers(), body: JSON.stringify(item) });
      }
      const text = await response.text();
      statuses.push(response.status === 204 ? '204' : `${response.status} ${(JSON.parse(text) as { code: string }).code}`);
    }
    return statuses;
  }

  /** First listing pages (the whole collection fits one) taken while the writers run, with their changes cursors. */
  async function lister(done: () => boolean): Promise<{ objects: ObjectViewBody[]; cursor: string }[]> {
    const snapshots: { objects: ObjectViewBody[]; cursor: string }[] = [];
    while (!done()) {
      const response = await fetch(`${base()}?limit=1000`, { headers: headers() });
      expect(response.status).toBe(200);
      const links = parseLinks(response.headers.get('link') ?? undefined);
      expect(links.next).toBeUndefined();
      snapshots.push({ objects: (await response.json()) as ObjectViewBody[], cursor: cursorOf(links.related) as string });
    }
    return snapshots;
  }

  it('a follower polling while many clients write (single requests and batches) sees every committed change exactly once, in feed order', async () => {
    // A starting population, then the snapshot the follower starts from.
    for (let n = 0; n < POOL; n += 2) {
      await t
        .http()
        .post('/intel/collections/busy/objects')
        .set('X-Api-Key', t.adminKey)
        .send({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context: { seeded: n } })
        .expect(204);
    }
    const snapshot = await listAll(t, 'busy', 4);

    let writersDone = false;
    const following = follow(t, 'busy', snapshot.changesCursor, () => writersDone, { limit: 7, longPoll: false });
    const listing = lister(() => writersDone);
    const statuses = (await Promise.all(Array.from({ length: WRITERS }, (_, id) => writer(id)))).flat();
    writersDone = true;
    const seen = await following;
    const snapshots = await listing;

    // Writes succeeded or were refused as key-set conflicts; nothing else (no 500, no lock errors).
    expect([...new Set(statuses)].sort()).toEqual(['204', '422 KeySetConflict'].filter((s) => statuses.includes(s)));
    expect(statuses.filter((s) => s === '204').length).toBeGreaterThan(WRITERS * OPERATIONS_PER_WRITER * 0.5);

    // The whole feed read afterwards in one pass: the follower saw exactly this, no gaps, no repeats.
    const feed: ChangeBody[] = [];
    let path: string | undefined = `/intel/collections/busy/objects/changes?cursor=${snapshot.changesCursor}&limit=1000`;
    while (path) {
      const response: { body: unknown; headers: Record<string, string> } = await t.http().get(path).set('X-Api-Key', t.adminKey);
      feed.push(...(response.body as ChangeBody[]));
      path = parseLinks(response.headers.link as string | undefined).next;
      if ((response.body as ChangeBody[]).length === 0) break;
    }
    expect(feed.length).toBeGreaterThan(WRITERS * 5);
    expect(seen).toEqual(feed);

    // Replaying what the follower saw over the first snapshot gives the collection as it is now.
    const fresh = await listAll(t, 'busy', 6);
    expect(canonical(replay(unscoredAll(snapshot.objects), seen))).toEqual(canonical(unscoredAll(fresh.objects)));

    // Every listing taken mid-write is exactly the collection at its own changes cursor: the first snapshot
    // replayed with the feed up to that cursor (the whole feed minus what follows the cursor). A page and a
    // cursor from two snapshots would disagree as soon as a change committed between them.
    expect(snapshots.length).toBeGreaterThan(2);
    for (const { objects, cursor } of snapshots) {
      const { changes: after } = await followAll(t, 'busy', cursor, 1000);
      expect(after).toEqual(feed.slice(feed.length - after.length));
      expect(canonical(unscoredAll(objects))).toEqual(canonical(replay(unscoredAll(snapshot.objects), feed.slice(0, feed.length - after.length))));
    }
  });

  it('adds and deletes of one object racing each other: the feed replays to the final state, Add/Remove alternate', async () => {
    const key = md5(777);
    const { changesCursor, objects } = await listAll(t, 'busy', 1000);
    const requests = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? fetch(base(), {
            method: 'POST',
            headers: headers(),
            body: JSON.stringify({ type: 'File', keys: [{ type: 'MD5Hash', value: key }], context: { i } }),
          })
        : fetch(`${base()}?objectKeyType=MD5Hash&objectKey=${key}`, { method: 'DELETE', headers: headers() }),
    );
    const responses = await Promise.all(requests);
    expect(responses.map((r) => r.status)).toEqual(Array(40).fill(204));
    const feed: ChangeBody[] = [];
    let path: string | undefined = `/intel/collections/busy/objects/changes?cursor=${changesCursor}&limit=1000`;
    while (path) {
      const page: { body: unknown; headers: Record<string, string> } = await t.http().get(path).set('X-Api-Key', t.adminKey);
      feed.push(...(page.body as ChangeBody[]));
      path = (page.body as ChangeBody[]).length > 0 ? parseLinks(page.headers.link).next : undefined;
    }
    // One object: it can only be removed while present and only be added while absent.
    const lifecycle = feed.map((change) => change.operation).filter((operation) => operation !== 'Update');
    lifecycle.forEach((operation, index) => expect(operation).toBe(index % 2 === 0 ? 'Add' : 'Remove'));
    const fresh = await listAll(t, 'busy', 1000);
    expect(canonical(replay(unscoredAll(objects), feed))).toEqual(canonical(unscoredAll(fresh.objects)));
  });

  it('concurrent identical adds of a new object record exactly one Add', async () => {
    const body = JSON.stringify({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(999) }], context: { same: true } });
    const { changesCursor } = await listAll(t, 'busy', 1000);
    const responses = await Promise.all(Array.from({ length: 16 }, () => fetch(base(), { method: 'POST', headers: headers(), body })));
    expect(responses.map((r) => r.status)).toEqual(Array(16).fill(204));
    const page = await t.http().get(`/intel/collections/busy/objects/changes?cursor=${changesCursor}`).set('X-Api-Key', t.adminKey);
    expect(page.body).toEqual([
      { operation: 'Add', object: { type: 'File', keys: [{ type: 'MD5Hash', value: md5(999) }], context: { same: true }, tlp: 'TLP:CLEAR' } },
    ]);
  });
});
