import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { WRITER_LOCK_CLASS } from '../../src/database/advisory-locks.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, followAll, listAll, md5, sha1 } from './objects.helpers.js';

/**
 * Updates of different objects of one collection do not wait for each other: a raw connection holds what
 * an update of object X holds while it is in flight (the collection's writer lock in shared mode, as every
 * single write takes it, and X's row), and the service must still commit updates of other objects. Waiting
 * is read from PostgreSQL (pg_blocking_pids), never from timings: a request either completes, or some
 * backend is seen blocked by the held transaction. The same held row orders a merge and an update of one
 * object deterministically, so that the update's decision is stale when it gets the row.
 */
describe('single updates of one collection commit in parallel', () => {
  let t: TestApp;
  let holder: pg.Client;
  let collectionId: number;
  let holderPid: number;

  beforeAll(async () => {
    t = await createTestApp();
    await createCollection(t, 'parallel');
    for (const n of [1, 2, 3]) {
      await t
        .http()
        .post('/intel/collections/parallel/objects')
        .set('X-Api-Key', t.adminKey)
        .send({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context: { v: 0 } })
        .expect(204);
    }
    holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    ({ id: collectionId } = (await holder.query(`SELECT id FROM intel_collection WHERE name = 'parallel'`)).rows[0] as { id: number });
    ({ pid: holderPid } = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number });
  });
  afterAll(async () => {
    await holder.end();
    await t.close();
  });

  const add = (n: number, context: Record<string, unknown>, extraKeys: { type: string; value: string }[] = []) =>
    fetch(`${t.url}/intel/collections/parallel/objects`, {
      method: 'POST',
      headers: { 'X-Api-Key': t.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }, ...extraKeys], context }),
    });

  /** Backends waiting for a lock the holder's transaction holds. */
  async function blockedByHolder(): Promise<number> {
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [holderPid]);
    return (rows[0] as { n: number }).n;
  }

  /** `request`'s status once it completes; throws as soon as a backend waits for the holder instead. */
  async function completesBesideHolder(request: Promise<Response>): Promise<number> {
    let settled = false;
    const watched = request.finally(() => (settled = true));
    while (!settled) {
      if ((await blockedByHolder()) > 0) throw new Error('the write waits for the held update of another object');
      await Promise.race([watched, new Promise((resolve) => setTimeout(resolve, 10))]);
    }
    return (await watched).status;
  }

  /** Resolves once `count` backends of the database wait for a lock (the holder's, or one queued behind it). */
  async function untilBlocked(count = 1): Promise<void> {
    const waiting = async () =>
      (
        (await t.db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND cardinality(pg_blocking_pids(pid)) > 0`))
          .rows[0] as { n: number }
      ).n;
    while ((await waiting()) < count) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  it('while an update of one object is in flight, updates and merges of others commit; one of the same object waits for it', async () => {
    const { changesCursor } = await listAll(t, 'parallel', 10);
    await holder.query('BEGIN');
    try {
      await holder.query('SELECT pg_advisory_xact_lock_shared($1, $2)', [WRITER_LOCK_CLASS, collectionId]);
      await holder.query(
        `SELECT 1 FROM intel_object o JOIN intel_object_key k ON k.object_id = o.id
                           WHERE k.collection_id = $1 AND k.key_type = 'MD5Hash' AND k.value = $2 FOR UPDATE OF o`,
        [collectionId, md5(1)],
      );
      // An update, and a merge (a new key), of other objects of the collection.
      expect(await completesBesideHolder(add(2, { v: 1 }))).toBe(204);
      expect(await completesBesideHolder(add(3, { v: 1 }, [{ type: 'SHA1Hash', value: sha1(3) }]))).toBe(204);
      // The same object: it waits for the held row (so the watch above could have seen a wait).
      const same = add(1, { v: 1 });
      await untilBlocked();
      await holder.query('COMMIT');
      expect((await same).status).toBe(204);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
    }
    const { changes } = await followAll(t, 'parallel', changesCursor, 10);
    expect(changes.map((change) => [change.operation, change.object.keys[0].value, change.object.keys.length])).toEqual([
      ['Update', md5(2), 1],
      ['Update', md5(3), 2],
      ['Update', md5(1), 1],
    ]);
  });
  it('a merge and an update of one object queued behind its row: the update, decided on the keys before the merge, keeps the merged key', async () => {
    await holder.query('BEGIN');
    let merge: Promise<Response> | undefined;
    let update: Promise<Response> | undefined;
    const { changesCursor } = await listAll(t, 'parallel', 10);
    try {
      await holder.query(
        `SELECT 1 FROM intel_object o JOIN intel_object_key k ON k.object_id = o.id
                           WHERE k.collection_id = $1 AND k.key_type = 'MD5Hash' AND k.value = $2 FOR UPDATE OF o`,
        [collectionId, md5(2)],
      );
      // Both decide from the object as it is (one MD5 key), then wait for its row: the merge first.
      merge = add(2, { v: 'merge' }, [{ type: 'SHA1Hash', value: sha1(2) }]);
      await untilBlocked(1);
      update = add(2, { v: 'update' });
      await untilBlocked(2);
      await holder.query('COMMIT');
      expect([(await merge).status, (await update).status]).toEqual([204, 204]);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await Promise.allSettled([merge, update]);
    }
    const keys = [
      { type: 'MD5Hash', value: md5(2) },
      { type: 'SHA1Hash', value: sha1(2) },
    ];
    const { changes } = await followAll(t, 'parallel', changesCursor, 10);
    expect(changes).toEqual([
      { operation: 'Update', object: { type: 'File', keys, context: { v: 'merge' }, tlp: 'TLP:CLEAR' } },
      { operation: 'Update', object: { type: 'File', keys, context: { v: 'update' }, tlp: 'TLP:CLEAR' } },
    ]);
  });
});
