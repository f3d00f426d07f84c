import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import type { TlpRank } from '../../common/markings/tlp.js';
import { Metrics } from '../../common/metrics/metrics.js';
import { isoUtc } from '../../common/sql/timestamps.js';
import { API_CLAIM_FRESHNESS } from '../api-claim.js';
import { type RecordedIds } from '../change-records.js';
import { CLAIMS_ON } from '../claimed-marking.js';
import { LIVE_AT_DECISION, OWNING_OBJECT_IDS } from '../object-statements.js';
import type { WriteOrigin } from '../write-origin.js';
import type { BatchPlan, ClaimMarkings, OwningObject } from './batch-plan.js';
import { BATCH_STATEMENTS } from './batch-statements.js';

/** The SQL of batches; every method is one round trip, run by BatchService inside its transaction. */
@Injectable()
export class BatchRepository {
  constructor(private readonly metrics: Metrics) {}

  /** The stored objects any of `keys` belongs to, with their whole state (the batch replays over it). */
  async owners(manager: EntityManager, collectionId: number, keys: ObjectKey[]): Promise<OwningObject[]> {
    return manager.query(
      `SELECT o.id, o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt", NOT ${LIVE_AT_DECISION('o')} AS expired,
              statement_timestamp()::text AS "decidedAt", o.uid, o.added_at::text AS "addedAt", o.api_tlp AS "apiTlp", o.claimed_tlp AS "claimedTlp",
              ${API_CLAIM_FRESHNESS('o')}
         FROM intel_object o WHERE o.id IN (${OWNING_OBJECT_IDS})`,
      [collectionId, keys.map((key) => key.type), keys.map((key) => key.value)],
    );
  }

  /**
   * The markings of the source claims on `keys` (the batch's and its owners'), by key (`type\nvalue`): per
   * key, the most restrictive claim of the collection's sources; keys no source claims are absent. Read under
   * the collection's exclusive writer lock, as the owners are: the plan marks each object it writes with them.
   */
  async claimMarkings(manager: EntityManager, collectionName: string, keys: ObjectKey[]): Promise<ClaimMarkings> {
    const rows: { type: string; value: string; tlp: TlpRank }[] = await manager.query(
      `SELECT c.key_type AS type, c.value, max(c.tlp) AS tlp FROM ${CLAIMS_ON('unnest($2::text[], $3::text[]) AS q(type, value)', '$1')} GROUP BY 1, 2`,
      [collectionName, keys.map((key) => key.type), keys.map((key) => key.value)],
    );
    return new Map(rows.map((row) => [`${row.type}\n${row.value}`, row.tlp]));
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
