import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Metrics } from '../common/metrics/metrics.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import { EXPIRY_LOCK } from '../database/advisory-locks.js';
import { insertChanges, ORIGIN_PARAMETERS } from './change-records.js';
import { storedObject, type RawObject, type WrittenChange } from './object-rows.js';
import { WRITTEN_OBJECT } from './object-statements.js';
import { ObjectsRepository } from './objects.repository.js';
import type { WriteOrigin } from './write-origin.js';

const EXPIRE_PARAMETERS = namedParameters(['collectionId', 'ids', 'limit', 'asOf', ...ORIGIN_PARAMETERS]);
const X = EXPIRE_PARAMETERS.$;

/**
 * Removes up to `limit` expired objects of the collection (only those of `ids` when it is not null), oldest id
 * first, with one `Remove` change each (reason Expired), recorded in that order. Run only under the
 * collection's exclusive writer lock (ObjectsRepository.lockCollection); an object another writer already removed is
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
    RETURNING o.id, o.type, o.keys, o.context, o.expires_at, o.uid, o.added_at, o.tlp
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
          // A Remove leaves the marking as it was.
          tlp: 'gone.tlp',
          wasTlp: 'gone.tlp',
        },
        from: 'FROM gone',
      },
      X,
    )}
  )
  SELECT ${WRITTEN_OBJECT('gone')} FROM gone ORDER BY gone.id`;

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
      // One expiry job at a time across instances (the pruner's pattern): two would only queue on the
      // same collection locks. Exactly-once does not rest on it: a removed object cannot be removed again.
      const [{ locked }]: { locked: boolean }[] = await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [EXPIRY_LOCK]);
      if (!locked) return undefined;
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
}
