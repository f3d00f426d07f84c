import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { type ChangeBody, canonical, createCollection, listAll, md5, replay, sha1 } from './objects.helpers.js';

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

  /** One writer: a deterministic mix of adds (new objects and updates), merges that may conflict, and deletes. */
  async function writer(id: number): Promise<number[]> {
    const statuses: number[] = [];
    let seed = id * 7919 + 1;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let op = 0; op < OPERATIONS_PER_WRITER; op++) {
      const n = Math.floor(random() * POOL);
      const roll = random();
      let response: Response;
      if (roll < 0.2) {
        response = await fetch(`${base()}?objectKeyType=MD5Hash&objectKey=${md5(n)}`, { method: 'DELETE', headers: headers() });
      } else {
        // Some adds also carry a SHA1 key, which may belong to another object already (KeySetConflict).
        const keys = [{ type: 'MD5Hash', value: md5(n) }];
        if (roll > 0.85) keys.push({ type: 'SHA1Hash', value: sha1(Math.floor(random() * POOL)) });
        const body = { type: 'File', keys, context: { writer: id, op, size: op } };
        response = await fetch(base(), { method: 'POST', headers: headers(), body: JSON.stringify(body) });
      }
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    return statuses;
  }

  /** Follows the feed with small pages until told to stop and the feed is drained, as a polling client would. */
  async function follower(startCursor: string, done: () => boolean): Promise<ChangeBody[]> {
    const seen: ChangeBody[] = [];
    let saved = startCursor;
    for (;;) {
      const finished = done();
      const response = await fetch(`${base()}/changes?cursor=${saved}&limit=7`, { headers: headers() });
      expect(response.status).toBe(200);
      const page = (await response.json()) as ChangeBody[];
      const next = parseLinks(response.headers.get('link') ?? undefined).next;
      expect(next !== undefined).toBe(page.length > 0);
      seen.push(...page);
      if (next) saved = cursorOf(next) as string;
      // Only an empty page read after every writer finished proves the follower has caught up.
      if (page.length === 0 && finished) return seen;
      if (page.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it('a follower polling while many clients write sees every committed change exactly once, in feed order', async () => {
    // A starting population, then the snapshot the follower starts from.
    for (let n = 0; n < POOL; n += 2) {
      await t.http().post('/intel/collections/busy/objects').set('X-Api-Key', t.adminKey)
        .send({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context: { seeded: n } }).expect(204);
    }
    const snapshot = await listAll(t, 'busy', 4);

    let writersDone = false;
    const following = follower(snapshot.changesCursor, () => writersDone);
    const statuses = (await Promise.all(Array.from({ length: WRITERS }, (_, id) => writer(id)))).flat();
    writersDone = true;
    const seen = await following;

    // Writes succeeded or were refused as conflicts; nothing else (no 500, no lock errors).
    expect(new Set(statuses)).toEqual(new Set(statuses.filter((s) => s === 204 || s === 422)));
    expect(statuses.filter((s) => s === 204).length).toBeGreaterThan(WRITERS * OPERATIONS_PER_WRITER * 0.5);

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
    expect(canonical(replay(snapshot.objects, seen))).toEqual(canonical(fresh.objects));
  });

  it('concurrent identical adds of a new object record exactly one Add', async () => {
    const body = JSON.stringify({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(999) }], context: { same: true } });
    const { changesCursor } = await listAll(t, 'busy', 1000);
    const responses = await Promise.all(
      Array.from({ length: 16 }, () => fetch(base(), { method: 'POST', headers: headers(), body })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(16).fill(204));
    const page = await t.http().get(`/intel/collections/busy/objects/changes?cursor=${changesCursor}`).set('X-Api-Key', t.adminKey);
    expect(page.body).toEqual([
      { operation: 'Add', object: { type: 'File', keys: [{ type: 'MD5Hash', value: md5(999) }], context: { same: true } } },
    ]);
  });
});
