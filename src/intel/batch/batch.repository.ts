import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import { isoUtc, type RecordedIds } from '../change-records.js';
import { LIVE_AT_DECISION, OWNING_OBJECT_IDS } from '../object-statements.js';
import { Metrics } from '../../common/metrics/metrics.js';
import type { WriteOrigin } from '../write-origin.js';
import type { BatchPlan, OwningObject } from './batch-plan.js';
import { BATCH_STATEMENTS } from './batch-statements.js';

/** The SQL of batches; every method is one round trip, run by BatchService inside its transaction. */
@Injectable()
export class BatchRepository {
  constructor(private readonly metrics: Metrics) {}

  /** The stored objects any of `keys` belongs to, with their whole state (the batch replays over it). */
  async owners(manager: EntityManager, collectionId: number, keys: ObjectKey[]): Promise<OwningObject[]> {
    return manager.query(
      `SELECT o.id, o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt", NOT ${LIVE_AT_DECISION('o')} AS expired,
              statement_timestamp()::text AS "decidedAt", o.uid, o.added_at::text AS "addedAt"
         FROM intel_object o WHERE o.id IN (${OWNING_OBJECT_IDS})`,
      [collectionId, keys.map((key) => key.type), keys.map((key) => key.value)],
    );
  }

  /**
   * Of `keys`, those whose object holds the `api` claim of extensions §13 (some write other than a source
   * run added or updated it: `api_first_seen_at`, set by the statement that wrote it, see api-claim.ts; kept
   * whatever the change feed prunes; objects stored before claims were recorded have it). Run under the
   * collection's exclusive writer lock, so no native write can land between this read and the withdrawal
   * it decides.
   */
  async nativelyClaimed(manager: EntityManager, collectionId: number, keys: ObjectKey[]): Promise<ObjectKey[]> {
    if (keys.length === 0) return [];
    return manager.query(
      `SELECT k.key_type AS type, k.value
         FROM unnest($2::text[], $3::text[]) AS w(type, value)
         JOIN intel_object_key k ON k.collection_id = $1 AND k.key_type = w.type AND k.value = w.value
         JOIN intel_object o ON o.id = k.object_id
        WHERE o.api_first_seen_at IS NOT NULL`,
      [collectionId, keys.map((key) => key.type), keys.map((key) => key.value)],
    );
  }

  /**
   * Writes the plan's net effect and its change records; the caller holds the collection's exclusive
   * writer lock. Returns the ids of the first and last record, or null when the plan records none.
   */
  async apply(manager: EntityManager, origin: WriteOrigin, collectionId: number, plan: BatchPlan): Promise<RecordedIds | null> {
    if (plan.deletes.length > 0) {
      await manager.query(BATCH_STATEMENTS.remove, [collectionId, plan.deletes]);
    }
    if (plan.changes.length === 0) return null;
    const [recorded]: RecordedIds[] = await manager.query(BATCH_STATEMENTS.apply, BATCH_STATEMENTS.parameters(collectionId, plan, origin));
    for (const change of plan.changes) this.metrics.changesWritten.labels(change.operation).inc();
    return recorded;
  }
}
