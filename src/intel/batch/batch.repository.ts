import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import { insertChanges, nextSeqs } from '../change-records.js';
import { OWNING_OBJECT_IDS } from '../objects.repository.js';
import type { BatchPlan, OwningObject } from './batch-plan.js';

/**
 * The net effect of a batch in one statement, every row set passed as one JSON document and expanded by
 * jsonb_to_recordset: updated objects and their new key rows, new objects (ids drawn from the identity
 * sequence so that their key rows can name them in the same statement) and their key rows, and the
 * change records numbered from one range of sequence numbers taken in `seq`. Deletes run before it in a
 * statement of their own: key rows go with their object by ON DELETE CASCADE, which fires at the end of
 * the deleting statement, and a later item may re-add one of those keys.
 * $1 collection id, $2 number of changes, $3 the plan as JSON.
 */
const APPLY = `
    WITH ${nextSeqs('$2::int')},
    plan AS (SELECT $3::jsonb AS doc),
    upd AS (
      UPDATE intel_object o SET keys = u.keys, context = u.context
        FROM plan, jsonb_to_recordset(plan.doc -> 'updates') AS u(id bigint, keys jsonb, context jsonb)
       WHERE o.id = u.id AND o.collection_id = $1::int
    ),
    upd_keys AS (
      INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
      SELECT $1::int, k.type, k.value, u.id
        FROM plan, jsonb_to_recordset(plan.doc -> 'updates') AS u(id bigint, "newKeys" jsonb),
             jsonb_to_recordset(u."newKeys") AS k(type text, value text)
    ),
    new_obj AS (
      SELECT nextval(pg_get_serial_sequence('intel_object', 'id')) AS id, n.type, n.keys, n.context
        FROM plan, jsonb_to_recordset(plan.doc -> 'inserts') AS n(type text, keys jsonb, context jsonb)
    ),
    ins AS (
      INSERT INTO intel_object (id, collection_id, type, keys, context) SELECT id, $1::int, type, keys, context FROM new_obj
    ),
    ins_keys AS (
      INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
      SELECT $1::int, k.type, k.value, new_obj.id FROM new_obj, jsonb_to_recordset(new_obj.keys) AS k(type text, value text)
    ),
    change AS (
      ${insertChanges(`SELECT seq.last_seq - $2::int + c.n, c.operation, c.type, c.keys, c.context
        FROM seq, plan, jsonb_to_recordset(plan.doc -> 'changes') AS c(n int, operation text, type text, keys jsonb, context jsonb)`)}
    )
    SELECT 1`;

/** JSON text of the plan's row sets; contexts are spliced in as the JSON text they already are. */
function planDocument(plan: BatchPlan): string {
  const keysJson = (keys: ObjectKey[]) => JSON.stringify(keys);
  const updates = plan.updates.map(
    (u) => `{"id":${u.id},"keys":${keysJson(u.keys)},"newKeys":${keysJson(u.newKeys)},"context":${u.contextJson}}`,
  );
  const inserts = plan.inserts.map((n) => `{"type":"${n.type}","keys":${keysJson(n.keys)},"context":${n.contextJson}}`);
  // `n`: the change's position in the batch, 1-based, which numbers it within the batch's range.
  const changes = plan.changes.map(
    (c, index) => `{"n":${index + 1},"operation":"${c.operation}","type":"${c.type}","keys":${keysJson(c.keys)},"context":${c.contextJson}}`,
  );
  return `{"updates":[${updates.join(',')}],"inserts":[${inserts.join(',')}],"changes":[${changes.join(',')}]}`;
}

/** The SQL of batches; every method is one round trip, run by BatchService inside its transaction. */
@Injectable()
export class BatchRepository {
  /** The stored objects any of `keys` belongs to, with their whole state (the batch replays over it). */
  async owners(manager: EntityManager, collectionId: number, keys: ObjectKey[]): Promise<OwningObject[]> {
    return manager.query(
      `SELECT o.id, o.type, o.keys, o.context FROM intel_object o WHERE o.id IN (${OWNING_OBJECT_IDS})`,
      [collectionId, keys.map((key) => key.type), keys.map((key) => key.value)],
    );
  }

  /** Writes the plan's net effect and its change records; the caller holds the collection lock. */
  async apply(manager: EntityManager, collectionId: number, plan: BatchPlan): Promise<void> {
    if (plan.deletes.length > 0) {
      await manager.query(`DELETE FROM intel_object WHERE collection_id = $1 AND id = ANY($2::bigint[])`, [
        collectionId,
        plan.deletes,
      ]);
    }
    if (plan.changes.length > 0) await manager.query(APPLY, [collectionId, plan.changes.length, planDocument(plan)]);
  }
}
