import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { PRUNE_LOCK } from '../../src/database/advisory-locks.js';
import { ChangeRetentionRepository } from '../../src/intel/change-retention.repository.js';
import { ChangeSequencer } from '../../src/intel/change-sequencer.js';
import { ChangesService } from '../../src/intel/changes.service.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { canonical, createCollection, followAll, listAll, md5, replay, sha1, unscoredAll, type ChangeBody } from './objects.helpers.js';

describe('intel change feed (/intel/collections/{collection_id}/objects/changes)', () => {
  let t: TestApp;
  let db: pg.Pool;

  beforeAll(async () => {
    t = await createTestApp();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every change committed so far has its feed position (tests that age records by seq need them numbered). */
  const numbered = () => t.app.get(ChangeSequencer).settled();

  let collectionCount = 0;
  async function freshCollection(): Promise<string> {
    const name = `feed-${++collectionCount}`;
    await createCollection(t, name);
    return name;
  }

  const add = (collection: string, body: object) =>
    t.http().post(`/intel/collections/${collection}/objects`).set('X-Api-Key', t.adminKey).send(body).expect(204);
  const removeMd5 = (collection: string, n: number) =>
    t
      .http()
      .delete(`/intel/collections/${collection}/objects?objectKeyType=MD5Hash&objectKey=${md5(n)}`)
      .set('X-Api-Key', t.adminKey)
      .expect(204);
  const addFile = (collection: string, n: number, context: Record<string, unknown> = {}) =>
    add(collection, { type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context });
  const changes = (collection: string, query: string) => t.http().get(`/intel/collections/${collection}/objects/changes${query}`).set('X-Api-Key', t.adminKey);

  it('pages the feed in order: a next link after the last change on every non-empty page, none on an empty one', async () => {
    const c = await freshCollection();
    const { changesCursor } = await listAll(t, c);
    for (let n = 1; n <= 5; n++) await addFile(c, n, { n });

    const first = await changes(c, `?cursor=${changesCursor}&limit=2`);
    expect(first.status).toBe(200);
    expect((first.body as ChangeBody[]).map((ch) => ch.object.context.n)).toEqual([1, 2]);
    const next = parseLinks(first.headers.link as string).next;
    expect(next).toMatch(new RegExp(`^/intel/collections/${c}/objects/changes\\?cursor=[A-Za-z0-9_-]+&limit=2$`));

    const second = await t.http().get(next).set('X-Api-Key', t.adminKey);
    expect((second.body as ChangeBody[]).map((ch) => ch.object.context.n)).toEqual([3, 4]);
    // A short, last-for-now page still links past its last change (wire-contract §3.2).
    const third = await t
      .http()
      .get(parseLinks(second.headers.link as string).next)
      .set('X-Api-Key', t.adminKey);
    expect((third.body as ChangeBody[]).map((ch) => ch.object.context.n)).toEqual([5]);
    const thirdNext = parseLinks(third.headers.link as string).next;
    expect(thirdNext).toEqual(expect.any(String));

    const empty = await t.http().get(thirdNext).set('X-Api-Key', t.adminKey);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);
    expect(empty.headers.link).toBeUndefined();

    // The saved cursor picks up what arrives later, and only that.
    await addFile(c, 6, { n: 6 });
    const later = await t.http().get(thirdNext).set('X-Api-Key', t.adminKey);
    expect((later.body as ChangeBody[]).map((ch) => ch.object.context.n)).toEqual([6]);
  });

  it('records Add, Update and Remove with the state after the change (the last state for Remove)', async () => {
    const c = await freshCollection();
    const { changesCursor } = await listAll(t, c);
    await addFile(c, 1, { size: 1 });
    await add(c, {
      type: 'File',
      keys: [
        { type: 'MD5Hash', value: md5(1) },
        { type: 'SHA1Hash', value: sha1(1) },
      ],
      context: { size: 2 },
    });
    await removeMd5(c, 1);
    const both = [
      { type: 'MD5Hash', value: md5(1) },
      { type: 'SHA1Hash', value: sha1(1) },
    ];
    expect((await followAll(t, c, changesCursor)).changes).toEqual([
      { operation: 'Add', object: { type: 'File', keys: [both[0]], context: { size: 1 }, tlp: 'TLP:CLEAR' } },
      { operation: 'Update', object: { type: 'File', keys: both, context: { size: 2 }, tlp: 'TLP:CLEAR' } },
      { operation: 'Remove', reason: 'Deleted', object: { type: 'File', keys: both, context: { size: 2 }, tlp: 'TLP:CLEAR' } },
    ]);
  });

  it('snapshot then follow: all listing pages plus the changes after the related cursor equal a fresh listing', async () => {
    const c = await freshCollection();
    for (let n = 1; n <= 10; n++) await addFile(c, n, { n });

    // The first page fixes the snapshot; writes land between the page requests, on pages not read yet too.
    const firstPage = await t.http().get(`/intel/collections/${c}/objects?limit=4`).set('X-Api-Key', t.adminKey);
    const links = parseLinks(firstPage.headers.link as string);
    const snapshotCursor = cursorOf(links.related) as string;
    const snapshot = [...(firstPage.body as ChangeBody['object'][])];
    await removeMd5(c, 2);
    await removeMd5(c, 9);
    await addFile(c, 8, { n: 8, updated: true });
    await addFile(c, 11, { n: 11 });
    let next: string | undefined = links.next;
    while (next) {
      const page: { body: unknown; headers: Record<string, string> } = await t.http().get(next).set('X-Api-Key', t.adminKey);
      snapshot.push(...(page.body as ChangeBody['object'][]));
      next = parseLinks(page.headers.link as string).next;
    }
    await add(c, { type: 'DomainName', keys: [{ type: 'DomainName', value: 'late.example' }], context: {} });
    await add(c, {
      type: 'File',
      keys: [
        { type: 'MD5Hash', value: md5(3) },
        { type: 'SHA256Hash', value: 'c'.repeat(64) },
      ],
      context: { n: 3 },
    });

    const followed = await followAll(t, c, snapshotCursor, 3);
    expect(followed.changes.map((ch) => ch.operation)).toEqual(['Remove', 'Remove', 'Update', 'Add', 'Add', 'Update']);
    const fresh = await listAll(t, c, 5);
    expect(canonical(replay(unscoredAll(snapshot), followed.changes))).toEqual(canonical(unscoredAll(fresh.objects)));
    expect(fresh.objects).toHaveLength(10);
  });

  it.each([
    ['a missing cursor', ''],
    ['an empty cursor (the SDK sends cursor= for None)', '?cursor='],
    ['a cursor outside the base64url alphabet', '?cursor=a+b'],
    ['a cursor that is not JSON', '?cursor=bm90IGpzb24'],
    ['a listing cursor', `?cursor=${Buffer.from('{"a":1}').toString('base64url')}`],
    ['a cursor with a negative position', `?cursor=${Buffer.from('{"c":1,"s":-1}').toString('base64url')}`],
    // A cursor carries a ceiling only below TLP:RED (extensions §19), as a rank.
    ['a cursor with a ceiling of RED', `?cursor=${Buffer.from('{"c":1,"s":0,"t":4}').toString('base64url')}`],
    ['a cursor with a ceiling spelt out', `?cursor=${Buffer.from('{"c":1,"s":0,"t":"TLP:GREEN"}').toString('base64url')}`],
    ['a limit of 0', '?cursor=e30&limit=0'],
  ])('refuses %s with 400 InvalidQueryArgument', async (_name, query) => {
    const c = await freshCollection();
    expectError(await changes(c, query), 'InvalidQueryArgument');
  });

  it('refuses a cursor of another collection and a position never issued with 400 InvalidQueryArgument', async () => {
    const a = await freshCollection();
    const b = await freshCollection();
    const { changesCursor } = await listAll(t, a);
    expectError(await changes(b, `?cursor=${changesCursor}`), 'InvalidQueryArgument');
    const decoded = JSON.parse(Buffer.from(changesCursor, 'base64url').toString()) as { c: number; s: number };
    const ahead = Buffer.from(JSON.stringify({ c: decoded.c, s: decoded.s + 5 })).toString('base64url');
    expectError(await changes(a, `?cursor=${ahead}`), 'InvalidQueryArgument');
  });

  it('answers 404 NotFound for an unknown collection', async () => {
    expectError(await changes('no-such-collection', '?cursor=e30'), 'NotFound');
  });

  it('prunes changes older than the retention window; older cursors get 422 CursorOutOfRange', async () => {
    const c = await freshCollection();
    const { changesCursor: start } = await listAll(t, c);
    for (let n = 1; n <= 4; n++) await addFile(c, n);
    const afterTwo = cursorOf(parseLinks((await changes(c, `?cursor=${start}&limit=2`)).headers.link as string).next) as string;
    const { changesCursor: afterFour } = await listAll(t, c);

    // Changes 1..3 are past the retention window (30 days by default); change 4 is not.
    await db.query(
      `UPDATE intel_change SET created_at = now() - interval '31 days'
        WHERE seq <= 3 AND collection_id = (SELECT id FROM intel_collection WHERE name = $1)`,
      [c],
    );
    await t.app.get(ChangesService).prune();

    expectError(await changes(c, `?cursor=${start}`), 'CursorOutOfRange');
    expectError(await changes(c, `?cursor=${afterTwo}`), 'CursorOutOfRange');
    // The position right after the last pruned change still works, and so does a newer one.
    const { changes: rest } = await followAll(t, c, afterFour);
    expect(rest).toEqual([]);
    const fromThree = await listAll(t, c);
    await removeMd5(c, 1);
    expect((await followAll(t, c, fromThree.changesCursor)).changes.map((ch) => ch.operation)).toEqual(['Remove']);
    const remaining = async () =>
      (await db.query(`SELECT seq FROM intel_change WHERE collection_id = (SELECT id FROM intel_collection WHERE name = $1) ORDER BY seq`, [c])).rows.map(
        (row: { seq: string }) => Number(row.seq),
      );
    // Out of the feed, the records stay for object history until HISTORY_RETENTION_DAYS (365 by default).
    expect(await remaining()).toEqual([1, 2, 3, 4, 5]);
    await db.query(
      `UPDATE intel_change SET created_at = now() - interval '366 days'
        WHERE seq <= 3 AND collection_id = (SELECT id FROM intel_collection WHERE name = $1)`,
      [c],
    );
    await t.app.get(ChangesService).prune();
    expect(await remaining()).toEqual([4, 5]);
    // A cursor exactly at the pruned position (3) continues with change 4.
    const decoded = JSON.parse(Buffer.from(start, 'base64url').toString()) as { c: number };
    const atThree = Buffer.from(JSON.stringify({ c: decoded.c, s: 3 })).toString('base64url');
    const page = await changes(c, `?cursor=${atThree}`);
    expect(page.status).toBe(200);
    expect((page.body as ChangeBody[]).map((ch) => ch.object.keys[0].value)).toEqual([md5(4), md5(1)]);
  });

  it('leaves other collections and recent changes alone when pruning', async () => {
    const a = await freshCollection();
    const b = await freshCollection();
    const startA = (await listAll(t, a)).changesCursor;
    const startB = (await listAll(t, b)).changesCursor;
    await addFile(a, 1);
    await addFile(b, 1);
    await numbered();
    await db.query(
      `UPDATE intel_change SET created_at = now() - interval '31 days'
        WHERE collection_id = (SELECT id FROM intel_collection WHERE name = $1)`,
      [a],
    );
    await t.app.get(ChangesService).prune();
    expectError(await changes(a, `?cursor=${startA}`), 'CursorOutOfRange');
    expect((await followAll(t, b, startB)).changes).toHaveLength(1);
  });

  it('moves the pruned position past a backlog at once and removes its records in batches of the oldest', async () => {
    const c = await freshCollection();
    for (let n = 1; n <= 5; n++) await addFile(c, n);
    await numbered();
    const [{ id }] = (await db.query('SELECT id FROM intel_collection WHERE name = $1', [c])).rows as { id: number }[];
    await db.query(`UPDATE intel_change SET created_at = now() - interval '366 days' WHERE collection_id = $1`, [id]);
    const position = async () => Number((await db.query('SELECT pruned_seq FROM intel_collection WHERE id = $1', [id])).rows[0].pruned_seq);

    // Other tests' collections may hold expired records too: batch until this collection's first cut.
    const repository = t.app.get(ChangeRetentionRepository);
    const left = async () => (await db.query('SELECT count(*)::int AS n FROM intel_change WHERE collection_id = $1', [id])).rows[0].n as number;
    while ((await left()) === 5) expect(await repository.prune(30, 365, 2)).toBeGreaterThan(0);
    // The feed's position moves at once; the records go in batches of the oldest.
    expect(await position()).toBe(5);
    expect(await left()).toBeGreaterThan(0);
    await t.app.get(ChangesService).prune();
    expect(await left()).toBe(0);
  });

  it('skips pruning while another instance holds the pruning lock', async () => {
    const c = await freshCollection();
    await addFile(c, 1);
    await numbered();
    const [{ id }] = (await db.query('SELECT id FROM intel_collection WHERE name = $1', [c])).rows as { id: number }[];
    await db.query(`UPDATE intel_change SET created_at = now() - interval '366 days' WHERE collection_id = $1`, [id]);
    const other = new pg.Client({ connectionString: t.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock($1)', [PRUNE_LOCK]);
      expect(await t.app.get(ChangeRetentionRepository).prune(30, 365, 10_000)).toBeUndefined();
      await t.app.get(ChangesService).prune();
      const kept = await db.query('SELECT count(*)::int AS n FROM intel_change WHERE collection_id = $1', [id]);
      expect(kept.rows[0].n).toBe(1);
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
    await t.app.get(ChangesService).prune();
    const left = await db.query('SELECT count(*)::int AS n FROM intel_change WHERE collection_id = $1', [id]);
    expect(left.rows[0].n).toBe(0);
  });

  it('never moves the pruned position back when two prunes overlap (two instances sharing the database)', async () => {
    const c = await freshCollection();
    const { changesCursor: start } = await listAll(t, c);
    for (let n = 1; n <= 4; n++) await addFile(c, n);
    await numbered();
    const [{ id }] = (await db.query('SELECT id FROM intel_collection WHERE name = $1', [c])).rows as { id: number }[];
    await db.query(`UPDATE intel_change SET created_at = now() - interval '31 days' WHERE collection_id = $1 AND seq <= 2`, [id]);

    // Another instance's prune, which saw one more change aged out (cut 3), is in flight and holds the row.
    const other = new pg.Client({ connectionString: t.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('DELETE FROM intel_change WHERE collection_id = $1 AND seq <= 3', [id]);
      await other.query('UPDATE intel_collection SET pruned_seq = 3 WHERE id = $1', [id]);
      // This instance's prune reads its snapshot now (cut 2), then waits for the rows the other one holds.
      const pruning = t.app.get(ChangesService).prune();
      const waiting = async () =>
        Number(
          (
            await db.query(
              `SELECT count(*) AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%pruned_seq%'`,
            )
          ).rows[0].n,
        );
      for (let attempt = 0; attempt < 200 && (await waiting()) === 0; attempt++) await new Promise((r) => setTimeout(r, 25));
      expect(await waiting()).toBe(1);
      await other.query('COMMIT');
      await pruning;
    } finally {
      await other.end();
    }

    const [{ pruned }] = (await db.query('SELECT pruned_seq AS pruned FROM intel_collection WHERE id = $1', [id])).rows;
    expect(Number(pruned)).toBe(3);
    // Change 3 is gone: a follower at position 2 must be told so, not handed change 4 as if nothing were missing.
    const atTwo = Buffer.from(JSON.stringify({ c: id, s: 2 })).toString('base64url');
    expectError(await changes(c, `?cursor=${atTwo}`), 'CursorOutOfRange');
    expectError(await changes(c, `?cursor=${start}`), 'CursorOutOfRange');
  });

  it('shows each change object with the fields in ObjectView order (type, keys, context, tlp)', async () => {
    const c = await freshCollection();
    const { changesCursor } = await listAll(t, c);
    await addFile(c, 1, { z: 1, a: 2 });
    const page = await changes(c, `?cursor=${changesCursor}`);
    expect(page.text).toMatch(/^\[\{"operation":"Add","object":\{"type":"File","keys":\[.*\],"context":\{.*\},"tlp":"TLP:CLEAR"\}\}\]$/);
  });

  it('needs Read on the collection', async () => {
    const c = await freshCollection();
    const { changesCursor } = await listAll(t, c);
    const stranger = await createKey(t, { permissions: [{ resource: 2, actions: ['Read'] }] });
    expectError(await t.http().get(`/intel/collections/${c}/objects/changes?cursor=${changesCursor}`).set('X-Api-Key', stranger.key), 'MissingPermissions');
    const childrenReader = await createKey(t, { permissions: [{ resource: 2, actions: ['ReadChildren'] }] });
    const allowed = await t.http().get(`/intel/collections/${c}/objects/changes?cursor=${changesCursor}`).set('X-Api-Key', childrenReader.key);
    expect(allowed.status).toBe(200);
  });
});
