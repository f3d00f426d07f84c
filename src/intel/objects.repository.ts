import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import type { ObjectKey, ObjectType } from '../common/indicators/indicators.js';
import { EXCLUSIVE_WRITER_LOCK, insertChanges, ORIGIN_PARAMETERS } from './change-records.js';
import { FEED_STATEMENTS, type FeedPage, feedPageStatement, findHitsParameters, LIVE, OBJECT_STATEMENTS, WRITE_PARAMETERS, WRITTEN_OBJECT } from './object-statements.js';
import type { ChangeOperation, RemoveReason } from './entities/change.entity.js';
import { Metrics } from '../common/metrics/metrics.js';
import type { SizedRow } from '../common/pagination/page.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { EXPIRY_LOCK, PRUNE_LOCK, SEQUENCER_LOCK } from '../database/advisory-locks.js';
import { PreparedStatement } from '../common/sql/prepared-statement.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import type { WriteOrigin } from './write-origin.js';
import { type ObjectConditions, type ReadPolicy, UNFILTERED } from '../read-policy/read-policy.js';

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

/** A key hit as read for a decision, with the time its `expired` was judged at (timestamptz as text: microseconds kept). */
export type JudgedHit = KeyHit & { decidedAt: string };

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
  | {
      kind: 'update';
      objectId: string;
      keys: ObjectKey[];
      newKeys: ObjectKey[];
      context: string;
      expiry: Expiry;
      /** The object's keys the update was decided on: it is written only while they are still its keys. */
      decidedOnKeys: ObjectKey[];
    }
  | { kind: 'remove'; key: ObjectKey; uid?: string };

/** The write of an add (ObjectWrite without the remove). */
export type AddWrite = Exclude<ObjectWrite, { kind: 'remove' }>;

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

/** A feed read that also numbers the collection's committed changes (ChangeSequencer.numberAndRead). */
export interface Numbering {
  manager: EntityManager;
  /** The numbering CTEs for the statement (collection $1). */
  ctes: string;
}

/**
 * Named prepared statements: a single add or delete runs two of them per request outside any transaction,
 * where parsing and planning these CTEs cost PostgreSQL about as much as executing them.
 */
const WRITES = {
  insert: PreparedStatement.of<RawObject>(OBJECT_STATEMENTS.insert),
  update: PreparedStatement.of<RawObject>(OBJECT_STATEMENTS.update),
  remove: PreparedStatement.of<RawObject>(OBJECT_STATEMENTS.remove),
};

/** The objects owning any of the keys, for the add and delete rules (ObjectsRepository.findHits). */
const FIND_HITS = PreparedStatement.of<JudgedHit>(OBJECT_STATEMENTS.findHits);


const EXPIRE_PARAMETERS = namedParameters(['collectionId', 'ids', 'limit', 'asOf', ...ORIGIN_PARAMETERS]);
const X = EXPIRE_PARAMETERS.$;

/**
 * Removes up to `limit` expired objects of the collection (only those of `ids` when it is not null), oldest id
 * first, with one `Remove` change each (reason Expired), recorded in that order. Run only under the
 * collection's exclusive writer lock (lockCollection); an object another writer already removed is
 * simply not found again, so each expiry is recorded once. Expired as of `asOf`, the time the decision that
 * found them expired judged them at (findHits, BatchRepository.owners), or of this statement's start.
 */
const EXPIRE = `
  WITH gone AS (
    DELETE FROM intel_object o
     WHERE o.id IN (SELECT id FROM intel_object
                     WHERE collection_id = ${X.collectionId}::int AND expires_at <= COALESCE(${X.asOf}::timestamptz, statement_timestamp())
                       AND (${X.ids}::bigint[] IS NULL OR id = ANY(${X.ids}::bigint[]))
                     ORDER BY id LIMIT ${X.limit})
    RETURNING o.id, o.type, o.keys, o.context, o.expires_at, o.uid, o.added_at
  ),
  change AS (
    ${insertChanges(
      {
        record: {
          order: 'gone.id',
          operation: `'Remove'`,
          reason: `'Expired'`,
          type: 'gone.type',
          keys: 'gone.keys',
          context: 'gone.context',
          expiresAt: 'gone.expires_at',
          uid: 'gone.uid',
          addedAt: 'gone.added_at',
        },
        from: 'FROM gone',
      },
      X,
    )}
  )
  SELECT ${WRITTEN_OBJECT('gone')} FROM gone ORDER BY gone.id`;

/** A write's statement parameters, by name (OBJECT_STATEMENTS, WRITE_PARAMETERS). */
function writeParams(collectionId: number, write: ObjectWrite, origin: WriteOrigin): unknown[] {
  switch (write.kind) {
    case 'insert':
      return WRITE_PARAMETERS.insert.values({
        collectionId,
        type: write.type,
        keys: JSON.stringify(write.keys),
        context: write.context,
        expiresAt: write.expiry.at,
        ttlSeconds: write.expiry.ttlSeconds,
        ...origin,
      });
    case 'update':
      return WRITE_PARAMETERS.update.values({
        collectionId,
        objectId: write.objectId,
        keys: JSON.stringify(write.keys),
        context: write.context,
        newKeys: JSON.stringify(write.newKeys),
        expiresAt: write.expiry.at,
        ttlSeconds: write.expiry.ttlSeconds,
        decidedOnKeys: JSON.stringify(write.decidedOnKeys),
        ...origin,
      });
    case 'remove':
      return WRITE_PARAMETERS.remove.values({ collectionId, keyType: write.key.type, keyValue: write.key.value, uid: write.uid ?? null, ...origin });
  }
}

/** A key of the object being inserted was taken by a concurrent writer in the meantime. */
function isKeyTaken(error: unknown): boolean {
  // pg's own error from a prepared statement, TypeORM's wrapper of it from a transaction.
  const driverError = (error instanceof QueryFailedError ? error.driverError : error) as { code?: string; constraint?: string } | null;
  return driverError?.code === '23505' && driverError.constraint === 'intel_object_key_pkey';
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
  ): Promise<JudgedHit[]> {
    return FIND_HITS.on(runner, findHitsParameters(collectionId, keys, context, expiry));
  }

  /** The keys of the live object of this life (intel_object.uid), if there is one. */
  async keysOfLife(collectionId: number, uid: string): Promise<ObjectKey[] | undefined> {
    const rows: { keys: ObjectKey[] }[] = await this.dataSource.query(
      `SELECT keys FROM intel_object WHERE collection_id = $1 AND uid = $2 AND ${LIVE('intel_object')}`,
      [collectionId, uid],
    );
    return rows[0]?.keys;
  }

  /**
   * Takes the collection's writer lock in exclusive mode for the rest of the transaction, before the
   * caller reads the objects its decision depends on. Under READ COMMITTED every later statement gets a
   * snapshot taken after the lock was granted, so it sees everything the previous holder committed, and
   * no other writer of the collection (single writes take the lock shared) runs until this
   * transaction ends. It does not lock the collection row: the sequencer moves its last_seq meanwhile.
   */
  async lockCollection(manager: EntityManager, collectionId: number): Promise<void> {
    await manager.query(EXCLUSIVE_WRITER_LOCK, [collectionId]);
  }

  /** Applies one write with its change record, in one statement; null when it found nothing to write. */
  async write(runner: DataSource | EntityManager, origin: WriteOrigin, collectionId: number, write: ObjectWrite): Promise<WrittenChange | null> {
    const rows = await WRITES[write.kind].on(runner, writeParams(collectionId, write, origin));
    if (rows.length === 0) return null;
    const operation = write.kind === 'insert' ? 'Add' : write.kind === 'update' ? 'Update' : 'Remove';
    this.metrics.changesWritten.labels(operation).inc();
    return { operation, object: storedObject(rows[0]), ...(operation === 'Remove' && { reason: 'Deleted' as const }) };
  }

  /**
   * Removes expired objects of the collection (`ids`, or any, up to `limit`; expired as of `asOf`, or now)
   * with their `Remove` (Expired) records. The caller holds the collection's exclusive writer lock (lockCollection) in `manager`'s transaction.
   */
  async expire(
    manager: EntityManager,
    origin: WriteOrigin,
    collectionId: number,
    ids: string[] | null,
    limit: number,
    asOf: string | null = null,
  ): Promise<WrittenChange[]> {
    const rows: RawObject[] = await manager.query(EXPIRE, EXPIRE_PARAMETERS.values({ collectionId, ids, limit, asOf, ...origin }));
    if (rows.length > 0) this.metrics.changesWritten.labels('Remove').inc(rows.length);
    return rows.map((row) => ({ operation: 'Remove', object: storedObject(row), reason: 'Expired' }));
  }

  /**
   * One batch of the expiry job, in its own transaction: up to `limit` expired objects of the collection
   * holding the oldest expired object. Undefined when another instance runs the job right now.
   */
  async expireDue(origin: WriteOrigin, limit: number): Promise<{ collection: { id: number; name: string }; removed: WrittenChange[] } | undefined> {
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
      return { collection: due[0], removed: await this.expire(manager, origin, due[0].id, null, limit) };
    });
  }

  /**
   * An add decided from an unlocked read, as a single autocommitted statement (one round trip, the shared
   * writer lock held only for that statement, beside other single writes). An insert needs no existence
   * check inside it: the key rows' primary key is checked against committed and in-flight rows alike, so
   * a key taken since the caller looked makes the whole statement fail and roll back. An update checks
   * the object is still as decided on (see OBJECT_STATEMENTS.update). Either way null means the decision
   * is stale, and the caller decides again under the lock.
   */
  async writeAsDecided(origin: WriteOrigin, collectionId: number, write: AddWrite): Promise<WrittenChange | null> {
    try {
      return await this.write(this.dataSource, origin, collectionId, write);
    } catch (error) {
      if (isKeyTaken(error)) return null;
      throw error;
    }
  }

  /**
   * A page of objects after `afterId` with the feed position it reflects: snapshot + later changes = the
   * collection (decisions §8). `position` is the object id.
   *
   * Its statement and why its plan holds: FEED_PAGES in object-statements.ts.
   */
  listPage(policy: ReadPolicy, collectionId: number, afterId: number, limit: number, numbering?: Numbering) {
    return this.withFeedBounds<RawObject>('listPage', collectionId, afterId, limit, numbering, policy);
  }

  /**
   * Changes after `afterSeq` with the feed's bounds (so pruning cannot interleave); `position` is the seq.
   */
  changesAfter(collectionId: number, afterSeq: number, limit: number) {
    return this.withFeedBounds<{ operation: ChangeOperation; object: StoredObject; reason: RemoveReason | null }>('changesAfter', collectionId, afterSeq, limit);
  }

  /**
   * The change records of collection `collectionId` with ids `firstId` to `lastId`, in id order: what one
   * statement under the collection's exclusive writer lock recorded (a batch), read back after its
   * commit, numbered or not yet.
   */
  async changesWritten(collectionId: number, firstId: string, lastId: string): Promise<WrittenChange[]> {
    const rows: { operation: ChangeOperation; object: StoredObject; reason: RemoveReason | null }[] = await this.dataSource.query(
      `SELECT operation, object, reason FROM intel_change WHERE collection_id = $1 AND id BETWEEN $2 AND $3 ORDER BY id`,
      [collectionId, firstId, lastId],
    );
    return rows.map(({ operation, object, reason }) => ({ operation, object: storedObject(object), ...(reason !== null && { reason }) }));
  }

  /**
   * Up to `limit` rows of `page` with the collection's feed bounds, in one statement (feedPageStatement),
   * numbering the collection's committed records in it when given `numbering` (ChangeSequencer.numberAndRead).
   */
  private async withFeedBounds<Row>(
    page: FeedPage,
    collectionId: number,
    after: number,
    limit: number,
    numbering?: Numbering,
    /** A listing's read policy: its conditions narrow the walk, with their parameters after the feed's. */
    policy: ObjectConditions = UNFILTERED,
  ): Promise<{ lastSeq: number; prunedSeq: number; pending: boolean; rows: (Row & SizedRow & { position: string })[] }> {
    const runner = numbering?.manager ?? this.dataSource;
    const p = FEED_STATEMENTS.parameters.with(policy.parameterNames);
    const conditions = policy.conditions('intel_object', p.$);
    const rows: ({ lastSeq: string; prunedSeq: string; pending: boolean; position: string | null } & Row & SizedRow)[] =
      await runner.query(
        numbering || conditions ? feedPageStatement(page, numbering?.ctes, conditions) : FEED_STATEMENTS[page],
        p.values({ collectionId, after, limit, maxBytes: this.config.pageMaxBytes, ...policy.values() }),
      );
    return {
      lastSeq: Number(rows[0].lastSeq),
      prunedSeq: Number(rows[0].prunedSeq),
      pending: rows[0].pending,
      rows: rows.filter((row): row is typeof row & { position: string } => row.position !== null),
    };
  }

  /**
   * The feed's retention, then history's. The feed: per collection, pruned_seq moves to the position
   * before the first record younger than `feedDays` (the feed answers CursorOutOfRange below it, as if
   * those records were gone). Cutting at a sequence number keeps the feed a gap-free suffix, so "cursor <
   * pruned_seq" is exactly "a change it needs is out of the feed"; cutting before the first young record
   * (not after the last old one) never takes a young record out with old ones numbered after it.
   * pruned_seq never moves back: two overlapping runs (two instances) may commit in either order, and the
   * one with the older snapshot and lower cut must not undo the other's mark (its UPDATE re-checks the
   * condition on the row's latest version once it holds it).
   * History: up to `batchSize` of the oldest records older than `historyDays` (never younger than the
   * feed's retention) and at or below their collection's pruned_seq, i.e. out of the feed already, are
   * deleted. Returns how many were.
   */
  async prune(feedDays: number, historyDays: number, batchSize: number): Promise<number | undefined> {
    return this.dataSource.transaction(async (manager) => {
      // One pruner at a time across instances: two concurrent runs would lock collections in different
      // orders (a deadlock) and do the same work twice. A run that finds the lock taken simply skips.
      const [{ locked }]: { locked: boolean }[] = await manager.query(
        'SELECT pg_try_advisory_xact_lock($1) AS locked',
        [PRUNE_LOCK],
      );
      if (!locked) return undefined;
      // Pruning moves pruned_seq on the collection rows the sequencer moves last_seq on; one after the
      // other, their multi-row updates cannot lock those rows in opposite orders (a deadlock).
      await manager.query('SELECT pg_advisory_xact_lock($1)', [SEQUENCER_LOCK]);
      // The first young record after pruned_seq: a walk of (collection_id, seq) from there, as long as the
      // records that aged out since the last run (none left: every numbered record is old).
      await manager.query(
        `UPDATE intel_collection c SET pruned_seq = GREATEST(c.pruned_seq, cut.seq)
           FROM (SELECT k.id, COALESCE((SELECT ch.seq - 1 FROM intel_change ch
                                         WHERE ch.collection_id = k.id AND ch.seq > k.pruned_seq
                                           AND ch.created_at >= now() - make_interval(days => $1::int)
                                         ORDER BY ch.seq LIMIT 1), k.last_seq) AS seq
                   FROM intel_collection k) cut
          WHERE c.id = cut.id AND cut.seq > c.pruned_seq`,
        [feedDays],
      );
      // Oldest first by the created_at index, in short transactions however long the backlog.
      const rows: { removed: number }[] = await manager.query(
        `WITH removed AS (
           DELETE FROM intel_change ch
            WHERE ch.id IN (SELECT x.id FROM intel_change x JOIN intel_collection c ON c.id = x.collection_id
                             WHERE x.created_at < now() - make_interval(days => GREATEST($1::int, $2::int)) AND x.seq <= c.pruned_seq
                             ORDER BY x.created_at LIMIT $3)
           RETURNING 1
         )
         SELECT count(*)::int AS removed FROM removed`,
        [feedDays, historyDays, batchSize],
      );
      return rows[0].removed;
    });
  }
}
