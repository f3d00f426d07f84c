import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { Metrics } from '../common/metrics/metrics.js';
import { PreparedStatement } from '../common/sql/prepared-statement.js';
import { BUMP_SCORE_VERSION } from '../scoring/score-sql.js';
import { EXCLUSIVE_WRITER_LOCK } from './change-records.js';
import { storedObject, type AddWrite, type Expiry, type JudgedHit, type ObjectWrite, type RawObject, type WrittenChange } from './object-rows.js';
import { findHitsParameters, LIVE, OBJECT_STATEMENTS, WRITE_PARAMETERS } from './object-statements.js';
import type { WriteOrigin } from './write-origin.js';

/**
 * Named prepared statements: a single add or delete runs two of them per request outside any transaction,
 * where parsing and planning these CTEs cost PostgreSQL about as much as executing them.
 */
const WRITES = {
  insert: PreparedStatement.of<RawObject>(OBJECT_STATEMENTS.insert),
  update: PreparedStatement.of<RawObject>(OBJECT_STATEMENTS.update),
  remove: PreparedStatement.of<RawObject>(OBJECT_STATEMENTS.remove),
};

/** Refreshes the api claims of an identical re-send's objects (OBJECT_STATEMENTS.refresh). */
const REFRESH = PreparedStatement.of<{ refreshed: number }>(OBJECT_STATEMENTS.refresh);

/** The objects owning any of the keys, for the add and delete rules (ObjectsRepository.findHits). */
const FIND_HITS = PreparedStatement.of<JudgedHit>(OBJECT_STATEMENTS.findHits);

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
        tlp: write.tlp,
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
        tlp: write.tlp,
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

/**
 * The SQL of single object writes: the add and delete rules' reads, the collection's writer lock and the
 * writes with their change records. Every statement here is one round trip.
 */
@Injectable()
export class ObjectsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: Metrics,
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
   * Refreshes the api claims of `objectIds` (live objects an identical native re-send of a key of `reliability`
   * named) where they are behind (OBJECT_STATEMENTS.refresh), and when it refreshed any, adds to the score
   * version in the same transaction: their scores moved (the anchor, the reliability) without a change record.
   */
  async refreshClaims(manager: EntityManager, collectionId: number, objectIds: string[], reliability: number): Promise<void> {
    const [{ refreshed }] = await REFRESH.on(manager, WRITE_PARAMETERS.refresh.values({ collectionId, objectIds, reliability }));
    if (refreshed > 0) await manager.query(BUMP_SCORE_VERSION);
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
}
