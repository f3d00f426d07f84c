import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Metrics } from '../common/metrics/metrics.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import { EXPIRY_LOCK } from '../database/advisory-locks.js';
import { scoreSql } from '../scoring/score-sql.js';
import { insertChanges, ORIGIN_PARAMETERS, type OriginPlaceholders } from './change-records.js';
import { storedObject, type RawObject, type WrittenChange } from './object-rows.js';
import { WRITTEN_OBJECT } from './object-statements.js';
import { ObjectsRepository } from './objects.repository.js';
import type { WriteOrigin } from './write-origin.js';

const EXPIRE_PARAMETERS = namedParameters(['collectionId', 'ids', 'limit', 'asOf', ...ORIGIN_PARAMETERS]);
const X = EXPIRE_PARAMETERS.$;

/**
 * The Remove records (reason `reason`) of the objects a `gone` CTE deleted and returned, in id order, and
 * `select`: one statement per batch, the objects and their records together. `withGone` holds the CTEs up to
 * and including `gone` (DELETE … RETURNING o.id, o.type, o.keys, o.context, o.expires_at, o.uid, o.added_at,
 * o.tlp); the collection id is the statement's first parameter.
 */
const removedWithRecords = (reason: 'Expired' | 'Decayed', withGone: string, origin: OriginPlaceholders, select: string) => `
  WITH ${withGone},
  change AS (
    ${insertChanges(
      {
        record: {
          order: 'gone.id',
          operation: `'Remove'`,
          reason: `'${reason}'`,
          type: 'gone.type',
          keys: 'gone.keys',
          context: 'gone.context',
          expiresAt: 'gone.expires_at',
          uid: 'gone.uid',
          addedAt: 'gone.added_at',
          // A Remove leaves the marking as it was.
          tlp: 'gone.tlp',
          wasTlp: 'gone.tlp',
        },
        from: 'FROM gone',
      },
      origin,
    )}
  )
  ${select}`;

const GONE_COLUMNS = 'o.id, o.type, o.keys, o.context, o.expires_at, o.uid, o.added_at, o.tlp';

/**
 * Removes up to `limit` expired objects of the collection (only those of `ids` when it is not null), oldest id
 * first, with one `Remove` change each (reason Expired), recorded in that order. Run only under the
 * collection's exclusive writer lock (ObjectsRepository.lockCollection); an object another writer already removed is
 * simply not found again, so each expiry is recorded once. Expired as of `asOf`, the time the decision that
 * found them expired judged them at (findHits, BatchRepository.owners), or of this statement's start.
 */
const EXPIRE = removedWithRecords(
  'Expired',
  `gone AS (
    DELETE FROM intel_object o
     WHERE o.id IN (SELECT id FROM intel_object
                     WHERE collection_id = ${X.collectionId}::int AND expires_at <= COALESCE(${X.asOf}::timestamptz, statement_timestamp())
                       AND (${X.ids}::bigint[] IS NULL OR id = ANY(${X.ids}::bigint[]))
                     ORDER BY id LIMIT ${X.limit})
    RETURNING ${GONE_COLUMNS}
  )`,
  X,
  `SELECT ${WRITTEN_OBJECT('gone')} FROM gone ORDER BY gone.id`,
);

const DECAY_PARAMETERS = namedParameters(['collectionId', 'afterId', 'scan', 'threshold', ...ORIGIN_PARAMETERS]);
const D = DECAY_PARAMETERS.$;

/**
 * One batch of decayed objects (extensions §18, `decayedAction: expire`): of the next `scan` objects of the
 * collection after id `afterId`, those whose score now is below the threshold are removed, each with a `Remove`
 * (reason Decayed). The score is judged in the DELETE itself, on the row it locks, under the collection's
 * exclusive writer lock: an input that lifted it back before this statement keeps it, and an object removed
 * by another writer is not found again (once only). Expired objects are left to their own removal (Expired).
 * Answers the last id scanned (null when none was left: the collection is done) with the removed objects.
 */
const DECAY = removedWithRecords(
  'Decayed',
  `scanned AS (
    SELECT id FROM intel_object WHERE collection_id = ${D.collectionId}::int AND id > ${D.afterId}::bigint ORDER BY id LIMIT ${D.scan}
  ),
  gone AS (
    DELETE FROM intel_object o
     WHERE o.id IN (SELECT id FROM scanned)
       AND (o.expires_at IS NULL OR o.expires_at > statement_timestamp())
       AND ${scoreSql('o', 'statement_timestamp()')} < ${D.threshold}::float8
    RETURNING ${GONE_COLUMNS}
  )`,
  D,
  `SELECT s.last AS "scannedTo", g.* FROM (SELECT max(id) AS last FROM scanned) s
     LEFT JOIN (SELECT gone.id, ${WRITTEN_OBJECT('gone')} FROM gone) g ON true
    ORDER BY g.id`,
);

/** A collection whose decayed objects the job removes, and the score below which they are (its threshold). */
export interface DecayingCollection {
  id: number;
  name: string;
  threshold: number;
}

/**
 * The SQL of expiry: expired objects removed with their `Remove` (Expired) records, for a decision that
 * found them expired (ObjectsService, under the collection's exclusive writer lock) and for the expiry job.
 */
@Injectable()
export class ObjectExpiryRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: Metrics,
    private readonly objects: ObjectsRepository,
  ) {}

  /**
   * Removes expired objects of the collection (`ids`, or any, up to `limit`; expired as of `asOf`, or now)
   * with their `Remove` (Expired) records. The caller holds the collection's exclusive writer lock (ObjectsRepository.lockCollection) in `manager`'s transaction.
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
      // Two jobs would only queue on the same collection locks. Exactly-once does not rest on it: a removed
      // object cannot be removed again.
      if (!(await this.holdsJobLock(manager))) return undefined;
      const due: { id: number; name: string }[] = await manager.query(
        `SELECT c.id, c.name FROM intel_collection c
          WHERE c.id = (SELECT collection_id FROM intel_object
                         WHERE expires_at IS NOT NULL AND expires_at <= now() ORDER BY expires_at LIMIT 1)`,
      );
      if (due.length === 0) return { collection: { id: 0, name: '' }, removed: [] };
      await this.objects.lockCollection(manager, due[0].id);
      return { collection: due[0], removed: await this.expire(manager, origin, due[0].id, null, limit) };
    });
  }

  /** The collections with `decayedAction: expire` and a threshold above 0 (below 0 no score falls). */
  async decayingCollections(): Promise<DecayingCollection[]> {
    return this.dataSource.query(
      `SELECT id, name, (scoring->>'threshold')::float8 AS threshold FROM intel_collection
        WHERE scoring->>'decayedAction' = 'expire' AND (scoring->>'threshold')::float8 > 0 ORDER BY id`,
    );
  }

  /**
   * One batch of the job's removal of decayed objects, in its own transaction under the job's lock and the
   * collection's exclusive writer lock: the objects after `afterId` (up to `scan` looked at) scoring below the
   * threshold now, removed with their `Remove` (Decayed) records. Undefined when another instance runs the job
   * right now; `scannedTo` null when no object was left to look at.
   */
  async removeDecayed(
    origin: WriteOrigin,
    collection: DecayingCollection,
    afterId: string,
    scan: number,
  ): Promise<{ scannedTo: string | null; removed: WrittenChange[] } | undefined> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await this.holdsJobLock(manager))) return undefined;
      await this.objects.lockCollection(manager, collection.id);
      const rows: (RawObject & { scannedTo: string | null; id: string | null })[] = await manager.query(
        DECAY,
        DECAY_PARAMETERS.values({ collectionId: collection.id, afterId, scan, threshold: collection.threshold, ...origin }),
      );
      const removed = rows.filter((row) => row.id !== null);
      if (removed.length > 0) this.metrics.changesWritten.labels('Remove').inc(removed.length);
      return {
        scannedTo: rows[0].scannedTo,
        removed: removed.map((row) => ({ operation: 'Remove', object: storedObject(row), reason: 'Decayed' })),
      };
    });
  }

  /** One expiry job at a time across instances (the pruner's pattern), for this transaction. */
  private async holdsJobLock(manager: EntityManager): Promise<boolean> {
    const [{ locked }]: { locked: boolean }[] = await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [EXPIRY_LOCK]);
    return locked;
  }
}
