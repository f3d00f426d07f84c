import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CLEAR, RED, TLP_LEVELS, tlpOf, type TlpRank } from '../../src/common/markings/tlp.js';
import { InvalidationBus } from '../../src/database/invalidation-bus.js';
import { expectError } from '../support/clients/api-client.js';
import { eventually } from '../support/eventually.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  canonical,
  follow,
  freshCollections,
  listAll,
  md5,
  replay,
  sha1,
  unscoredAll,
  viewOf,
  type ChangeBody,
  type ObjectViewBody,
} from './objects.helpers.js';

const INTEL = 2;
const GREEN: TlpRank = 1;
const AMBER: TlpRank = 2;

type Key = { type: string; value: string };
const md5Key = (n: number): Key => ({ type: 'MD5Hash', value: md5(n) });
const sha1Key = (n: number): Key => ({ type: 'SHA1Hash', value: sha1(n) });
const file = (keys: Key[], context: Record<string, unknown> = {}): ObjectViewBody => ({ type: 'File', keys, context });
/** The view of that File marked TLP:GREEN, as the feed shows it. */
const greenView = (keys: Key[], context: Record<string, unknown> = {}) => viewOf(file(keys, context), 'TLP:GREEN');

/**
 * The change feed, history and provenance of a key whose `maxTLP` is below RED (extensions §19 "Feed per
 * key", "Keys"): a GREEN key never sees a record of an object marked above GREEN at that record; the record
 * that raised an object above it reads as `Remove` (`Restricted`, the object as the key last saw it), the one
 * that brought it back as `Add`; pages that read only hidden records are empty and link `next`.
 */
describe('markings: the change feed, history and provenance per key', () => {
  let t: TestApp;
  let green: string;
  let everything: string;
  const fresh = freshCollections(() => t, 'marked');

  beforeAll(async () => {
    t = await createTestApp();
    green = await readerKey(GREEN);
    everything = await readerKey();
  });
  afterAll(async () => {
    await t.close();
  });

  /** A key reading every collection, with `maxTLP` `ceiling` (without: the admin's own, TLP:RED). */
  async function readerKey(ceiling?: TlpRank): Promise<string> {
    const permissions = [{ resource: INTEL, actions: ['Read' as const, 'ReadChildren' as const] }];
    return (await createKey(t, { permissions, ...(ceiling !== undefined && { maxTLP: tlpOf(ceiling) }) })).key;
  }

  /** Adds (or updates) `object` in `collection`, marked `tlp` (a rank), through the API. */
  async function write(collection: string, object: ObjectViewBody, tlp: TlpRank): Promise<void> {
    await t.intel
      .add(collection, object)
      .query({ tlp: tlpOf(tlp) })
      .expect(204);
  }

  /** Deletes the object holding `key` from `collection` (its Remove keeps the object's marking). */
  async function remove(collection: string, key: Key): Promise<void> {
    await t.intel.remove(collection, key.type, key.value).expect(204);
  }

  /** One page of the feed as `key` reads it: its changes and the cursor of its next link (undefined: none). */
  async function page(collection: string, cursor: string, key: string, query = '') {
    const response = await t.intel.as(key).changes(collection, `?cursor=${cursor}${query}`);
    expect(response.status).toBe(200);
    const next = parseLinks(response.headers.link as string | undefined).next;
    return { changes: response.body as ChangeBody[], next: next === undefined ? undefined : (cursorOf(next) as string) };
  }

  /** Every page from `cursor` to the first without a next link (which must be empty: caught up). */
  async function walk(collection: string, cursor: string, key: string, limit: number) {
    const pages: ChangeBody[][] = [];
    let at = cursor;
    for (;;) {
      const { changes, next } = await page(collection, at, key, `&limit=${limit}`);
      pages.push(changes);
      if (next === undefined) {
        expect(changes).toEqual([]);
        return { pages, cursor: at };
      }
      at = next;
    }
  }

  it('a GREEN key follows the feed: hidden records skipped, a raise reads as Remove Restricted, a lowering as Add, positions gap-free', async () => {
    const name = await fresh();
    const start = (await listAll(t, name, 3, green)).changesCursor;
    const startAll = (await listAll(t, name, 3, everything)).changesCursor;
    await write(name, file([md5Key(1)], { v: 1 }), GREEN); // Add, seen
    await write(name, file([md5Key(2)], { v: 1 }), AMBER); // Add above: hidden
    await write(name, file([md5Key(1), sha1Key(1)], { v: 2 }), AMBER); // raised, with a key that joined: Remove Restricted
    await write(name, file([md5Key(2)], { v: 2 }), GREEN); // lowered: Add
    await write(name, file([md5Key(3)]), AMBER); // Add above: hidden
    await remove(name, md5Key(3)); // removed while above: hidden
    await write(name, file([md5Key(1)], { v: 3 }), AMBER); // above before and after: hidden
    await write(name, file([md5Key(1)], { v: 4 }), GREEN); // lowered: Add, with every key it has now
    await remove(name, md5Key(2)); // Remove, seen

    const seen: ChangeBody[] = [
      { operation: 'Add', object: greenView([md5Key(1)], { v: 1 }) },
      // Nothing of the raising change: neither its context, nor the key that joined with it, nor its marking.
      { operation: 'Remove', object: greenView([md5Key(1)], { v: 1 }), reason: 'Restricted' },
      { operation: 'Add', object: greenView([md5Key(2)], { v: 2 }) },
      { operation: 'Add', object: greenView([md5Key(1), sha1Key(1)], { v: 4 }) },
      { operation: 'Remove', object: greenView([md5Key(2)], { v: 2 }), reason: 'Deleted' },
    ];
    // One record a page: a page of a hidden record is empty and links next; the last page (nothing read) has no link.
    const one = await walk(name, start, green, 1);
    expect(one.pages).toEqual([[seen[0]], [], [seen[1]], [seen[2]], [], [], [], [seen[3]], [seen[4]], []]);
    // Any page size walks the same changes, and ends at the same position.
    for (const limit of [2, 3, 100]) {
      const walked = await walk(name, start, green, limit);
      expect(walked.pages.flat()).toEqual(seen);
      expect(walked.cursor).toBe(one.cursor);
    }
    // What the feed says the key holds is exactly what it lists.
    expect(canonical(replay([], seen))).toEqual(canonical(unscoredAll((await listAll(t, name, 3, green)).objects)));

    // A key that may read every marking walks every record as it is (from its own listing's cursor).
    const all = await walk(name, startAll, everything, 4);
    expect(all.pages.flat().map(({ operation, object }) => [operation, object.keys.map((key) => key.value.at(-1)).join(''), object.context.v])).toEqual([
      ['Add', '1', 1],
      ['Add', '2', 1],
      ['Update', '11', 2],
      ['Update', '2', 2],
      ['Add', '3', undefined],
      ['Remove', '3', undefined],
      ['Update', '11', 3],
      ['Update', '11', 4],
      ['Remove', '2', 2],
    ]);
  });

  it('a marking changed alone (the object re-sent as it is) reads as Remove Restricted, then Add', async () => {
    const name = await fresh();
    const start = (await listAll(t, name, 3, green)).changesCursor;
    const startAll = (await listAll(t, name, 3, everything)).changesCursor;
    for (const tlp of [GREEN, AMBER, AMBER, GREEN]) await write(name, file([md5Key(1)], { v: 1 }), tlp);
    expect((await walk(name, start, green, 10)).pages.flat()).toEqual([
      { operation: 'Add', object: greenView([md5Key(1)], { v: 1 }) },
      { operation: 'Remove', object: greenView([md5Key(1)], { v: 1 }), reason: 'Restricted' },
      { operation: 'Add', object: greenView([md5Key(1)], { v: 1 }) },
    ]);
    expect((await walk(name, startAll, everything, 10)).pages.flat().map(({ operation, object }) => [operation, object.tlp])).toEqual([
      ['Add', 'TLP:GREEN'],
      ['Update', 'TLP:AMBER'],
      ['Update', 'TLP:GREEN'],
    ]);
  });

  it('a cursor keeps the ceiling of the listing that issued it (maxTLP= included), never widened by the key', async () => {
    const name = await fresh();
    const { id, key: amber } = await createKey(t, { permissions: [{ resource: INTEL, actions: ['Read', 'ReadChildren'] }], maxTLP: 'TLP:AMBER' });
    // A CLEAR-only mirror kept by an unrestricted key, and a follower of an AMBER key.
    const listed = await t.intel.as(everything).objects(name, '?maxTLP=TLP:CLEAR').expect(200);
    const mirror = cursorOf(parseLinks(listed.headers.link as string).related) as string;
    const follower = (await listAll(t, name, 3, amber)).changesCursor;
    await write(name, file([md5Key(1)], { v: 1 }), CLEAR);
    await write(name, file([md5Key(2)]), GREEN);
    await write(name, file([md5Key(1)], { v: 2 }), GREEN);
    const clearView = (keys: Key[], context: Record<string, unknown> = {}) => viewOf(file(keys, context), 'TLP:CLEAR');
    const mirrored = await walk(name, mirror, everything, 1);
    expect(mirrored.pages.flat()).toEqual([
      { operation: 'Add', object: clearView([md5Key(1)], { v: 1 }) },
      { operation: 'Remove', object: clearView([md5Key(1)], { v: 1 }), reason: 'Restricted' },
    ]);
    // The key's own ceiling lowered after its listing: the lower one applies; raised again, its cursor's still does.
    await t.auth.updateKey(id, { maxTLP: 'TLP:CLEAR' }).expect(200);
    expect((await walk(name, follower, amber, 10)).pages.flat().map(({ operation }) => operation)).toEqual(['Add', 'Remove']);
    await t.auth.updateKey(id, { maxTLP: 'TLP:RED' }).expect(200);
    await write(name, file([md5Key(3)]), AMBER);
    await write(name, file([md5Key(4)]), RED);
    expect((await walk(name, follower, amber, 10)).pages.flat().map(({ operation, object }) => [operation, object.keys[0].value.at(-1)])).toEqual([
      ['Add', '1'],
      ['Add', '2'],
      ['Update', '1'],
      ['Add', '3'],
    ]);
  });

  it("a raise whose previous record history's retention removed reads as Remove with the type and keys alone", async () => {
    const name = await fresh();
    const start = (await listAll(t, name, 3, green)).changesCursor;
    await write(name, file([md5Key(1)], { v: 1 }), GREEN);
    const { cursor } = await walk(name, start, green, 10);
    // As pruning leaves it: the feed's retention moved past the record, history's deleted it.
    await t.db.query(
      `WITH gone AS (DELETE FROM intel_change ch USING intel_collection c WHERE c.id = ch.collection_id AND c.name = $1 RETURNING ch.seq)
       UPDATE intel_collection SET pruned_seq = (SELECT max(seq) FROM gone) WHERE name = $1`,
      [name],
    );
    await write(name, file([md5Key(1)], { v: 2 }), AMBER);
    expect((await walk(name, cursor, green, 10)).pages.flat()).toEqual([{ operation: 'Remove', object: greenView([md5Key(1)]), reason: 'Restricted' }]);
  });

  it('a long-poll of a GREEN key: a page of hidden records answers at once with next; caught up, it waits as before', async () => {
    const name = await fresh();
    const start = (await listAll(t, name, 3, green)).changesCursor;
    await write(name, file([md5Key(1)]), AMBER);
    await write(name, file([md5Key(2)]), AMBER);

    let began = Date.now();
    const hidden = await page(name, start, green, '&wait=20');
    expect(hidden.changes).toEqual([]);
    expect(hidden.next).toEqual(expect.any(String));
    expect(Date.now() - began).toBeLessThan(10_000);

    began = Date.now();
    const caughtUp = await page(name, hidden.next as string, green, '&wait=1');
    expect(caughtUp).toEqual({ changes: [], next: undefined });
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);

    // A waiting follower woken by a change it may not see answers at once, empty, its cursor moved past it.
    const waiters = () => t.app.get(InvalidationBus).waiters;
    const woken = page(name, hidden.next as string, green, '&wait=30');
    await eventually(() => waiters() === 1);
    await write(name, file([md5Key(3)]), AMBER);
    const moved = await woken;
    expect(moved.changes).toEqual([]);
    expect(moved.next).toEqual(expect.any(String));
    // From there it waits again, and is answered by a change it may see.
    const waiting = page(name, moved.next as string, green, '&wait=30');
    await eventually(() => waiters() === 1);
    await write(name, file([md5Key(4)]), GREEN);
    const answered = await waiting;
    expect(answered.changes).toEqual([{ operation: 'Add', object: greenView([md5Key(4)]) }]);
    expect(answered.next).toEqual(expect.any(String));
  });

  it('concurrent writers re-mark objects while a GREEN key follows: it is never shown anything above GREEN, and holds exactly what it lists', async () => {
    const name = await fresh();
    const POOL = 8;
    const WRITERS = 6;
    const OPERATIONS = 25;
    const objects = `${t.url}/intel/collections/${name}/objects`;
    const headers = { 'X-Api-Key': t.adminKey, 'Content-Type': 'application/json' };
    // Each write's context names its writer, operation and marking (a rank): unique, and what the key may see of it.
    const add = (n: number, context: { w: number; op: number; tlp: number }) =>
      fetch(`${objects}?tlp=${encodeURIComponent(TLP_LEVELS[context.tlp])}`, { method: 'POST', headers, body: JSON.stringify(file([md5Key(n)], context)) });
    for (let n = 0; n < POOL; n += 2) expect((await add(n, { w: -1, op: n, tlp: n % TLP_LEVELS.length })).status).toBe(204);
    const snapshot = await listAll(t, name, 3, green);
    const everySnapshot = await listAll(t, name, 3, everything);

    async function writer(w: number): Promise<void> {
      let seed = w * 7919 + 17;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648;
      };
      for (let op = 0; op < OPERATIONS; op++) {
        const n = Math.floor(random() * POOL);
        const tlp = Math.floor(random() * TLP_LEVELS.length);
        const roll = random();
        let response: Response;
        if (roll < 0.2) {
          response = await fetch(`${objects}?objectKeyType=MD5Hash&objectKey=${md5(n)}`, { method: 'DELETE', headers });
        } else if (roll < 0.35) {
          // A batch marks all its items alike.
          const items = [n, (n + 1) % POOL].map((m, i) => file([md5Key(m)], { w, op: op * 10 + i, tlp }));
          response = await fetch(`${objects}/batch?tlp=${encodeURIComponent(TLP_LEVELS[tlp])}`, { method: 'POST', headers, body: JSON.stringify(items) });
        } else {
          response = await add(n, { w, op, tlp });
        }
        expect([200, 204]).toContain(response.status);
      }
    }

    let done = false;
    const following = [
      follow(t, name, snapshot.changesCursor, () => done, { limit: 3, longPoll: true, key: green, restricted: true }),
      follow(t, name, everySnapshot.changesCursor, () => done, { limit: 5, longPoll: true, key: everything }),
    ];
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    done = true;
    const [seen, all] = await Promise.all(following);

    // Nothing written above GREEN ever reached the key, a Remove Restricted included (the object as last seen).
    for (const change of seen) expect(change.object.context.tlp).toBeLessThanOrEqual(GREEN);
    expect(seen.some((change) => change.reason === 'Restricted')).toBe(true);
    expect(all.some((change) => (change.object.context.tlp as number) > GREEN)).toBe(true);
    // Per object the key's feed is well formed: an Add only while it holds none, Update and Remove only while it holds it.
    const held = new Set(snapshot.objects.map((object) => object.keys[0].value));
    for (const { operation, object } of seen) {
      const value = object.keys[0].value;
      expect([operation, held.has(value)]).toEqual([operation, operation !== 'Add']);
      if (operation === 'Remove') held.delete(value);
      else held.add(value);
    }
    // What each feed says its key holds is exactly what the key lists now.
    expect(canonical(replay(unscoredAll(snapshot.objects), seen))).toEqual(canonical(unscoredAll((await listAll(t, name, 5, green)).objects)));
    expect(canonical(replay(unscoredAll(everySnapshot.objects), all))).toEqual(canonical(unscoredAll((await listAll(t, name, 5, everything)).objects)));
  });

  describe('history, provenance and sightings of an object above the key', () => {
    const keyQuery = (key: Key) => `?objectKeyType=${key.type}&objectKey=${key.value}`;
    const history = async (name: string, key: Key, as: string) => {
      const response = await t.intel.as(as).history(name, keyQuery(key));
      expect(response.status).toBe(200);
      return (response.body as { operation: string; obj: ObjectViewBody }[]).map(({ operation, obj }) => [operation, obj.context.v]);
    };
    const provenance = (name: string, key: Key, as: string) => t.intel.as(as).get(`/intel/collections/${name}/objects/provenance${keyQuery(key)}`);

    it('an object marked above the key does not exist for it: history [], provenance 404 ObjectNotFound', async () => {
      const name = await fresh();
      await write(name, file([md5Key(1)], { v: 1 }), GREEN);
      await write(name, file([md5Key(1)], { v: 2 }), AMBER);
      expect(await history(name, md5Key(1), green)).toEqual([]);
      expectError(await provenance(name, md5Key(1), green), 'ObjectNotFound');
      expect(await history(name, md5Key(1), everything)).toEqual([
        ['Update', 2],
        ['Add', 1],
      ]);
      expect((await provenance(name, md5Key(1), everything)).status).toBe(200);
      // Back within reach, it is there again, without what it was while above.
      await write(name, file([md5Key(1)], { v: 3 }), GREEN);
      expect(await history(name, md5Key(1), green)).toEqual([
        ['Update', 3],
        ['Add', 1],
      ]);
      expect((await provenance(name, md5Key(1), green)).status).toBe(200);
    });

    it("sightings of an object above the key: none listed, and the key's own are Unknown (nothing stored)", async () => {
      const name = await fresh();
      await write(name, file([md5Key(7)]), AMBER);
      const item = { type: 'MD5Hash', value: md5(7), source: 'siem/green' };
      expect((await t.sightings.as(green).record([item])).body).toEqual([{ status: 'Unknown' }]);
      expect((await t.sightings.as(everything).record([{ ...item, source: 'siem/all' }])).body).toEqual([{ status: 'Recorded' }]);
      const listed = async (as: string) => {
        const response = await t.sightings.as(as).sightings(keyQuery(md5Key(7)));
        expect(response.status).toBe(200);
        return (response.body as { source: string }[]).map(({ source }) => source);
      };
      expect(await listed(green)).toEqual([]);
      expect(await listed(everything)).toEqual(['siem/all']);
      // Within reach again, the object's sightings are there for the key too.
      await write(name, file([md5Key(7)], { v: 1 }), GREEN);
      expect(await listed(green)).toEqual(['siem/all']);
    });

    it('past lives: records marked above the key are left out, and a key that joined a life while above finds nothing', async () => {
      const name = await fresh();
      await write(name, file([md5Key(1)], { v: 1 }), GREEN);
      await write(name, file([md5Key(1), sha1Key(1)], { v: 2 }), AMBER);
      await remove(name, md5Key(1));
      await write(name, file([md5Key(1)], { v: 3 }), GREEN);
      expect(await history(name, md5Key(1), green)).toEqual([
        ['Add', 3],
        ['Add', 1],
      ]);
      expect(await history(name, md5Key(1), everything)).toEqual([
        ['Add', 3],
        ['Remove', 2],
        ['Update', 2],
        ['Add', 1],
      ]);
      // sha1(1) belonged to the first life only while it was AMBER: the key learns nothing of it.
      expect(await history(name, sha1Key(1), green)).toEqual([]);
      expect(await history(name, sha1Key(1), everything)).toEqual([
        ['Remove', 2],
        ['Update', 2],
        ['Add', 1],
      ]);
    });
  });
});
