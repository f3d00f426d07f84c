import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import type { ObjectKey, ObjectType } from '../common/indicators/indicators.js';
import { expiresAt, insertChanges, isoUtc, nextSeqs } from './change-records.js';
import type { ChangeOperation, RemoveReason } from './entities/change.entity.js';
import { Metrics } from '../common/metrics/metrics.js';
import type { SizedRow } from '../common/pagination/page.js';
import { sizeBoundedPage } from '../common/pagination/size-bounded-page.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

/** An existing object that one of the submitted keys points at. */
export interface KeyHit {
  id: string;
  keys: ObjectKey[];
  /** Its stored context equals the submitted one (jsonb equality); null when no context was given. */
  sameContext: boolean | null;
  /** Its expiry equals the submitted fixed one (both none included); null when the add moves it (a TTL). */
  sameExpiry: boolean | null;
  /** Past its expiry: logically gone, removed (Remove, Expired) before anything else is decided. */
  expired: boolean;
}

/**
 * When a written object expires: at a fixed moment (its own `expiresAt`, ISO text), `ttlSeconds` after the
 * write (the collection's time to live), or never (both null).
 */
export interface Expiry {
  at: string | null;
  ttlSeconds: number | null;
}

/** One write of the object add/delete rules; `context` is JSON text. */
export type ObjectWrite =
  | { kind: 'insert'; type: ObjectType; keys: ObjectKey[]; context: string; expiry: Expiry }
  | { kind: 'update'; objectId: string; keys: ObjectKey[]; newKeys: ObjectKey[]; context: string; expiry: Expiry }
  | { kind: 'remove'; key: ObjectKey };

export interface StoredObject {
  type: ObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds; absent when the object never expires. */
  expiresAt?: string;
}

/** A change record as written, for what is announced after the commit. */
export interface WrittenChange {
  operation: ChangeOperation;
  object: StoredObject;
  /** Set on `Remove` only. */
  reason?: RemoveReason;
}

/** A written object's columns as the statements return them. */
interface RawObject {
  type: ObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
  expiresAt: string | null;
}

/** The object view of a row: fields in the view's order (type, keys, context, expiresAt when set). */
export function storedObject({ type, keys, context, expiresAt }: RawObject | StoredObject): StoredObject {
  return { type, keys, context, ...(expiresAt != null && { expiresAt }) };
}

/** The written object's columns, as every write statement returns them. */
const WRITTEN_OBJECT = (row: string) =>
  `${row}.type, ${row}.keys, ${row}.context, ${isoUtc(`${row}.expires_at`)} AS "expiresAt"`;

/** Live objects only: an expired one is gone from every read at once, before the expiry job removes it. */
export const LIVE = (row: string) => `(${row}.expires_at IS NULL OR ${row}.expires_at > now())`;

/** Ids of the objects of collection $1 that own any of the keys ($2 types, $3 values, in pairs). */
export const OWNING_OBJECT_IDS = `SELECT k.object_id FROM intel_object_key k
                         JOIN unnest($2::text[], $3::text[]) AS q(type, value)
                           ON k.collection_id = $1 AND k.key_type = q.type AND k.value = q.value`;

/** Advisory lock key held by the one instance pruning the change feed. */
const PRUNE_LOCK = 7_240_002;
/** Advisory lock key held by the one instance running the expiry job. */
const EXPIRY_LOCK = 7_240_014;

/**
 * Every write statement first takes the collection's next sequence number. The UPDATE locks the
 * collection row until the transaction commits, so numbers are handed out in commit order (the feed's
 * gap-freeness rests on this; see ChangesService). `obj` selects FROM `seq`, which makes PostgreSQL take
 * that lock before touching any other row (data-modifying CTEs run in no guaranteed order otherwise), so
 * all writers lock in the same order and cannot deadlock. $1 = collection id.
 */
const NEXT_SEQ = nextSeqs('1');

/** The change record, built from what `obj` RETURNING says was stored; yields the written object (or no row). */
function recordingChange(operation: ChangeOperation, reason: RemoveReason | null = null): string {
  const why = reason === null ? 'NULL::text' : `'${reason}'`;
  return `,
    change AS (
      ${insertChanges(`SELECT seq.last_seq, '${operation}', ${why}, obj.type, obj.keys, obj.context, obj.expires_at FROM obj, seq`)}
    )
    SELECT ${WRITTEN_OBJECT('obj')} FROM obj`;
}

const ADD_KEYS = (keysParam: string) => `,
    new_keys AS (
      INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
      SELECT $1::int, k.type, k.value, obj.id FROM obj, jsonb_to_recordset(${keysParam}::jsonb) AS k(type text, value text)
    )`;

const WRITES: Record<ObjectWrite['kind'], string> = {
  insert: `
    WITH ${NEXT_SEQ},
    obj AS (
      INSERT INTO intel_object (collection_id, type, keys, context, expires_at)
      SELECT $1::int, $2::text, $3::jsonb, $4::jsonb, ${expiresAt('$5', '$6')} FROM seq
      RETURNING id, type, keys, context, expires_at
    )${ADD_KEYS('$3')}${recordingChange('Add')}`,
  update: `
    WITH ${NEXT_SEQ},
    obj AS (
      UPDATE intel_object o SET keys = $3::jsonb, context = $4::jsonb, expires_at = ${expiresAt('$6', '$7')}
        FROM seq WHERE o.id = $2::bigint
      RETURNING o.id, o.type, o.keys, o.context, o.expires_at
    )${ADD_KEYS('$5')}${recordingChange('Update')}`,
  // The key rows go with the object (ON DELETE CASCADE). An expired object is already gone: the expiry
  // job (or the next add of its keys) removes it, with reason Expired.
  remove: `
    WITH ${NEXT_SEQ},
    obj AS (
      DELETE FROM intel_object o USING intel_object_key k, seq
       WHERE k.collection_id = $1::int AND k.key_type = $2::text AND k.value = $3::text AND o.id = k.object_id
         AND ${LIVE('o')}
      RETURNING o.id, o.type, o.keys, o.context, o.expires_at
    )${recordingChange('Remove', 'Deleted')}`,
};

/**
 * Removes up to $3 expired objects of collection $1 (only those of $2 when it is not null), oldest id
 * first, with one `Remove` change each (reason Expired) numbered after the collection's last change.
 * Run only under the collection's write lock (lockCollection), so that the numbers are the next ones; an
 * object another writer already removed is simply not found again, so each expiry is recorded once.
 */
const EXPIRE = `
  WITH gone AS (
    DELETE FROM intel_object o
     WHERE o.id IN (SELECT id FROM intel_object
                     WHERE collection_id = $1::int AND expires_at <= now() AND ($2::bigint[] IS NULL OR id = ANY($2::bigint[]))
                     ORDER BY id LIMIT $3)
    RETURNING o.id, o.type, o.keys, o.context, o.expires_at
  ), numbered AS (
    SELECT gone.*, row_number() OVER (ORDER BY gone.id) AS n, count(*) OVER () AS total FROM gone
  ), ${nextSeqs('(SELECT count(*) FROM gone)')},
  change AS (
    ${insertChanges(`SELECT seq.last_seq - numbered.total + numbered.n, 'Remove', 'Expired', numbered.type, numbered.keys,
                            numbered.context, numbered.expires_at
                       FROM numbered, seq`)}
  )
  SELECT ${WRITTEN_OBJECT('numbered')} FROM numbered ORDER BY n`;

function writeParams(write: ObjectWrite): unknown[] {
  switch (write.kind) {
    case 'insert':
      return [write.type, JSON.stringify(write.keys), write.context, write.expiry.at, write.expiry.ttlSeconds];
    case 'update':
      return [
        write.objectId,
        JSON.stringify(write.keys),
        write.context,
        JSON.stringify(write.newKeys),
        write.expiry.at,
        write.expiry.ttlSeconds,
      ];
    case 'remove':
      return [write.key.type, write.key.value];
  }
}

/** A key of the object being inserted was taken by a concurrent writer in the meantime. */
function isKeyTaken(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && driverError.constraint === 'intel_object_key_pkey';
}

/** The SQL of objects and their change feed. Every statement here is one round trip. */
@Injectable()
export class ObjectsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The objects any of `keys` belongs to (at most one per key, by the primary key of intel_object_key),
   * expired ones included (flagged). The expiry is compared only when the add would not move it.
   */
  async findHits(
    runner: DataSource | EntityManager,
    collectionId: number,
    keys: ObjectKey[],
    context: string | null,
    expiry: Expiry | null = null,
  ): Promise<KeyHit[]> {
    return runner.query(
      `SELECT o.id, o.keys, o.context = $4::jsonb AS "sameContext",
              CASE WHEN $5::boolean THEN o.expires_at IS NOT DISTINCT FROM $6::timestamptz END AS "sameExpiry",
              NOT ${LIVE('o')} AS expired
         FROM intel_object o
        WHERE o.id IN (${OWNING_OBJECT_IDS})`,
      [
        collectionId,
        keys.map((key) => key.type),
        keys.map((key) => key.value),
        context,
        expiry !== null && expiry.ttlSeconds === null,
        expiry?.at ?? null,
      ],
    );
  }

  /**
   * Takes the collection's write lock for the rest of the transaction, before the caller reads the objects
   * its decision depends on. Under READ COMMITTED every later statement gets a snapshot taken after the
   * lock was granted, so it sees everything the previous holder committed. FOR NO KEY UPDATE conflicts
   * with other writers of the collection but not with the foreign-key checks of inserts.
   */
  async lockCollection(manager: EntityManager, collectionId: number): Promise<void> {
    await manager.query(`SELECT 1 FROM intel_collection WHERE id = $1 FOR NO KEY UPDATE`, [collectionId]);
  }

  /** Applies one write with its change record, in one statement; null when it found nothing to write. */
  async write(runner: DataSource | EntityManager, collectionId: number, write: ObjectWrite): Promise<WrittenChange | null> {
    const rows: RawObject[] = await runner.query(WRITES[write.kind], [collectionId, ...writeParams(write)]);
    if (rows.length === 0) return null;
    const operation = write.kind === 'insert' ? 'Add' : write.kind === 'update' ? 'Update' : 'Remove';
    this.metrics.changesWritten.labels(operation).inc();
    return { operation, object: storedObject(rows[0]), ...(operation === 'Remove' && { reason: 'Deleted' as const }) };
  }

  /**
   * Removes expired objects of the collection (`ids`, or any, up to `limit`) with their `Remove` (Expired)
   * records. The caller holds the collection lock (lockCollection) in `manager`'s transaction.
   */
  async expire(manager: EntityManager, collectionId: number, ids: string[] | null, limit: number): Promise<WrittenChange[]> {
    const rows: RawObject[] = await manager.query(EXPIRE, [collectionId, ids, limit]);
    if (rows.length > 0) this.metrics.changesWritten.labels('Remove').inc(rows.length);
    return rows.map((row) => ({ operation: 'Remove', object: storedObject(row), reason: 'Expired' }));
  }

  /**
   * One batch of the expiry job, in its own transaction: up to `limit` expired objects of the collection
   * holding the oldest expired object. Undefined when another instance runs the job right now.
   */
  async expireDue(limit: number): Promise<{ collection: { id: number; name: string }; removed: WrittenChange[] } | undefined> {
    return this.dataSource.transaction(async (manager) => {
      // One expiry job at a time across instances (the pruner's pattern): two would only queue on the
      // same collection locks. Exactly-once does not rest on it: a removed object cannot be removed again.
      const [{ locked }]: { locked: boolean }[] = await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
        EXPIRY_LOCK,
      ]);
      if (!locked) return undefined;
      const due: { id: number; name: string }[] = await manager.query(
        `SELECT c.id, c.name FROM intel_collection c
          WHERE c.id = (SELECT collection_id FROM intel_object
                         WHERE expires_at IS NOT NULL AND expires_at <= now() ORDER BY expires_at LIMIT 1)`,
      );
      if (due.length === 0) return { collection: { id: 0, name: '' }, removed: [] };
      await this.lockCollection(manager, due[0].id);
      return { collection: due[0], removed: await this.expire(manager, due[0].id, null, limit) };
    });
  }

  /**
   * The insert of a new object as a single autocommitted statement (one round trip, the lock held only
   * for that statement). No existence check is needed inside it: the key rows' primary key is checked
   * against committed and in-flight rows alike, so a key taken since the caller looked makes the whole
   * statement fail and roll back; that answers null and the caller decides again under the lock.
   */
  async insertIfKeysFree(collectionId: number, write: ObjectWrite & { kind: 'insert' }): Promise<WrittenChange | null> {
    try {
      return await this.write(this.dataSource, collectionId, write);
    } catch (error) {
      if (isKeyTaken(error)) return null;
      throw error;
    }
  }

  /**
   * A page of objects after `afterId` with the feed position it reflects: snapshot + later changes = the
   * collection (decisions §8). `position` is the object id.
   *
   * The shape leaves PostgreSQL one plan whatever its statistics say: a walk of the (collection_id, id)
   * index from ($1, $2), stopped by the LIMIT. The position is a row comparison on that index's full key,
   * which no other index can serve (there is no bare `id > $2` to walk the primary key with), and the
   * ORDER BY is exactly the index's columns, so there is nothing to sort. With `collection_id = $1 AND
   * id > $2` the planner could walk the primary key and filter (a young collection's first page read
   * every row of the older ones: 3829 buffers beside 100k objects, against 4), or, once the cursor lay
   * beyond the histogram (a burst ANALYZE has not seen), fetch the rest of the collection by the primary
   * key and sort it for every page. test/database/query-plans.e2e-spec.ts checks the plan. Bounded by size
   * as well (PAGE_MAX_BYTES, see sizeBoundedPage).
   */
  listPage(collectionId: number, afterId: number, limit: number) {
    // Expired objects are hidden at once, before the expiry job removes them (a filter, not a key: the walk
    // and its bound stay as they are).
    return this.withFeedBounds<RawObject>(
      sizeBoundedPage(
        {
          select: `id AS position, ${WRITTEN_OBJECT('intel_object')}`,
          from: `FROM intel_object WHERE (collection_id, id) > ($1, $2) AND collection_id <= $1 AND ${LIVE('intel_object')}`,
          orderBy: 'collection_id, id',
          rowBytes: 'row_bytes',
        },
        '$3',
        '$4',
      ),
      collectionId,
      afterId,
      limit,
    );
  }

  /**
   * Changes after `afterSeq` with the feed's bounds (so pruning cannot interleave); `position` is the seq.
   * Bounded by size as well (PAGE_MAX_BYTES, see sizeBoundedPage).
   */
  changesAfter(collectionId: number, afterSeq: number, limit: number) {
    // Remove records written before reasons were recorded were all explicit deletes.
    return this.withFeedBounds<{ operation: ChangeOperation; object: StoredObject; reason: RemoveReason | null }>(
      sizeBoundedPage(
        {
          select: `seq AS position, operation, object, CASE WHEN operation = 'Remove' THEN COALESCE(reason, 'Deleted') END AS reason`,
          from: 'FROM intel_change WHERE collection_id = $1 AND seq > $2',
          orderBy: 'seq',
          rowBytes: 'row_bytes',
        },
        '$3',
        '$4',
      ),
      collectionId,
      afterSeq,
      limit,
    );
  }

  /**
   * Up to `limit` rows of `page` (a keyset SELECT over collection $1 after position $2, limit $3, byte cap
   * $4, whose key is aliased `position`) together with the collection's feed bounds, in ONE statement: a
   * statement sees one snapshot, so the bounds are exactly those of the rows, without a REPEATABLE READ
   * transaction's extra round trips.
   */
  private async withFeedBounds<Row>(
    page: string,
    collectionId: number,
    after: number,
    limit: number,
  ): Promise<{ lastSeq: number; prunedSeq: number; rows: (Row & SizedRow & { position: string })[] }> {
    const rows: ({ lastSeq: string; prunedSeq: string; position: string | null } & Row & SizedRow)[] = await this.dataSource.query(
      `SELECT c.last_seq AS "lastSeq", c.pruned_seq AS "prunedSeq", r.*
         FROM intel_collection c
         LEFT JOIN (${page}) r ON true
        WHERE c.id = $1::int
        ORDER BY r.position`,
      [collectionId, after, limit, this.config.pageMaxBytes],
    );
    return {
      lastSeq: Number(rows[0].lastSeq),
      prunedSeq: Number(rows[0].prunedSeq),
      rows: rows.filter((row): row is typeof row & { position: string } => row.position !== null),
    };
  }

  /**
   * Deletes, per collection, every change up to the newest one older than the retention window, and
   * records that position as pruned_seq. Cutting at a sequence number (not a timestamp) keeps the
   * remaining feed a gap-free suffix, so "cursor < pruned_seq" is exactly "a change it needs is gone".
   * pruned_seq never moves back: two overlapping runs (two instances) may commit in either order, and the
   * one with the older snapshot and lower cut must not undo the other's mark over changes already deleted.
   */
  async prune(retentionDays: number, batchSize: number): Promise<number | undefined> {
    return this.dataSource.transaction(async (manager) => {
      // One pruner at a time across instances: two concurrent runs would lock collections in different
      // orders (a deadlock) and do the same work twice. A run that finds the lock taken simply skips.
      const [{ locked }]: { locked: boolean }[] = await manager.query(
        'SELECT pg_try_advisory_xact_lock($1) AS locked',
        [PRUNE_LOCK],
      );
      if (!locked) return undefined;
      // At most `batchSize` of the oldest expired records per statement, so that a long backlog is removed
      // in short transactions instead of one huge delete.
      const rows: { removed: number }[] = await manager.query(
        `WITH expired AS (
           SELECT collection_id, seq FROM intel_change
            WHERE created_at < now() - make_interval(days => $1)
            ORDER BY created_at LIMIT $2
         ),
         cut AS (SELECT collection_id, max(seq) AS seq FROM expired GROUP BY collection_id),
         removed AS (
           DELETE FROM intel_change ch USING cut
            WHERE ch.collection_id = cut.collection_id AND ch.seq <= cut.seq
           RETURNING 1
         ),
         marked AS (
           UPDATE intel_collection c SET pruned_seq = GREATEST(c.pruned_seq, cut.seq) FROM cut WHERE c.id = cut.collection_id
         )
         SELECT count(*)::int AS removed FROM removed`,
        [retentionDays, batchSize],
      );
      return rows[0].removed;
    });
  }
}
