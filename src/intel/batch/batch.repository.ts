import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import { namedParameters } from '../../common/sql/named-parameters.js';
import { expiresAt, insertChanges, isoUtc, ORIGIN_PARAMETERS, type RecordedIds } from '../change-records.js';
import { LIVE_AT_DECISION, OWNING_OBJECT_IDS } from '../object-statements.js';
import { Metrics } from '../../common/metrics/metrics.js';
import { NATIVE_VIAS, type WriteOrigin } from '../write-origin.js';
import type { BatchPlan, OwningObject } from './batch-plan.js';

/**
 * APPLY's parameters, by name: `collectionId` ($1, as every recording statement has it), `contexts` (each
 * distinct context's JSON text once), then one array per column of each row set, then the write's origin.
 */
const APPLY_PARAMETERS = namedParameters([
  'collectionId',
  'contexts',
  'updateIds',
  'updateKeys',
  'updateContexts',
  'newKeyIds',
  'newKeyTypes',
  'newKeyValues',
  'insertTypes',
  'insertKeys',
  'insertContexts',
  'changeOperations',
  'changeReasons',
  'changeTypes',
  'changeKeys',
  'changeContexts',
  'updateExpiresAt',
  'updateTtlSeconds',
  'insertExpiresAt',
  'insertTtlSeconds',
  'changeExpiresAt',
  'changeTtlSeconds',
  'changeUids',
  'changeAddedAt',
  'insertUids',
  ...ORIGIN_PARAMETERS,
]);
const P = APPLY_PARAMETERS.$;

/**
 * The net effect of a batch in one statement, every row set passed as parallel arrays (unnest): updated
 * objects and their new key rows, new objects (ids drawn from the identity sequence so that their key rows
 * can name them in the same statement) and their key rows, and the change records in item order (their
 * ids, and so their feed order, follow the items; the statement runs under the collection's exclusive
 * writer lock, so every earlier writer of these objects has committed). Each distinct context is sent
 * and parsed once (`contexts`, `ctx`) and named by its position from the objects and changes that carry it. Measured against the same statement fed by
 * one jsonb document through jsonb_to_recordset (contexts sent twice): about 15 % more objects/s.
 * Deletes run before it in a statement of their own: key rows go with their object by ON DELETE CASCADE,
 * which fires at the end of the deleting statement, and a later item may re-add one of those keys.
 * Expiries are a fixed moment or a TTL in seconds; the objects' lives of changes (uid, first add) are null
 * for new objects: this statement's time, as for the new objects.
 */
const APPLY = `
    WITH ctx AS MATERIALIZED (SELECT t.i, t.c::jsonb AS context FROM unnest(${P.contexts}::text[]) WITH ORDINALITY AS t(c, i)),
    upd AS (
      UPDATE intel_object o SET keys = u.keys::jsonb, context = ctx.context, expires_at = ${expiresAt('u.at', 'u.ttl')}
        FROM unnest(${P.updateIds}::bigint[], ${P.updateKeys}::text[], ${P.updateContexts}::int[], ${P.updateExpiresAt}::timestamptz[], ${P.updateTtlSeconds}::int[])
               AS u(id, keys, c, at, ttl) JOIN ctx ON ctx.i = u.c
       WHERE o.id = u.id AND o.collection_id = ${P.collectionId}::int
    ),
    upd_keys AS (
      INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
      SELECT ${P.collectionId}::int, k.type, k.value, k.id FROM unnest(${P.newKeyIds}::bigint[], ${P.newKeyTypes}::text[], ${P.newKeyValues}::text[]) AS k(id, type, value)
    ),
    new_obj AS MATERIALIZED (
      SELECT nextval(pg_get_serial_sequence('intel_object', 'id')) AS id, n.type, n.keys::jsonb AS keys, ctx.context,
             ${expiresAt('n.at', 'n.ttl')} AS expires_at, n.uid
        FROM unnest(${P.insertTypes}::text[], ${P.insertKeys}::text[], ${P.insertContexts}::int[], ${P.insertExpiresAt}::timestamptz[],
                    ${P.insertTtlSeconds}::int[], ${P.insertUids}::uuid[]) AS n(type, keys, c, at, ttl, uid)
        JOIN ctx ON ctx.i = n.c
    ),
    ins AS (
      INSERT INTO intel_object (id, collection_id, type, keys, context, expires_at, uid, added_at)
      SELECT id, ${P.collectionId}::int, type, keys, context, expires_at, uid, now() FROM new_obj
    ),
    ins_keys AS (
      INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
      SELECT ${P.collectionId}::int, k.type, k.value, new_obj.id FROM new_obj, jsonb_to_recordset(new_obj.keys) AS k(type text, value text)
    ),
    change AS (
      ${insertChanges(
        {
          record: {
            order: 'c.n',
            operation: 'c.operation',
            reason: 'c.reason',
            type: 'c.type',
            keys: 'c.keys::jsonb',
            context: 'ctx.context',
            expiresAt: expiresAt('c.at', 'c.ttl'),
            uid: 'c.uid',
            addedAt: 'COALESCE(c.added_at, now())',
          },
          from: `FROM unnest(${P.changeOperations}::text[], ${P.changeReasons}::text[], ${P.changeTypes}::text[], ${P.changeKeys}::text[], ${P.changeContexts}::int[],
                             ${P.changeExpiresAt}::timestamptz[], ${P.changeTtlSeconds}::int[], ${P.changeUids}::uuid[], ${P.changeAddedAt}::timestamptz[])
                   WITH ORDINALITY AS c(operation, reason, type, keys, c, at, ttl, uid, added_at, n)
                 JOIN ctx ON ctx.i = c.c`,
        },
        P,
      )}
      RETURNING id
    )
    SELECT min(id) AS "firstId", max(id) AS "lastId" FROM change`;

/** The plan as APPLY's values: each context JSON text once, referred to by its position (from 1). */
function applyParameters(collectionId: number, plan: BatchPlan, origin: WriteOrigin): unknown[] {
  const contexts = new Map<string, number>();
  const position = (contextJson: string) => {
    let at = contexts.get(contextJson);
    if (at === undefined) contexts.set(contextJson, (at = contexts.size + 1));
    return at;
  };
  const keysJson = (keys: ObjectKey[]) => JSON.stringify(keys);
  const newKeys = plan.updates.flatMap((u) => u.newKeys.map((key) => ({ id: u.id, key })));
  // Expiries: each row computes its own in the one statement (same now()), so an object and its change
  // record agree. `contexts` is complete once every column has taken its positions.
  const named = {
    collectionId,
    updateIds: plan.updates.map((u) => u.id),
    updateKeys: plan.updates.map((u) => keysJson(u.keys)),
    updateContexts: plan.updates.map((u) => position(u.contextJson)),
    newKeyIds: newKeys.map((k) => k.id),
    newKeyTypes: newKeys.map((k) => k.key.type),
    newKeyValues: newKeys.map((k) => k.key.value),
    insertTypes: plan.inserts.map((n) => n.type),
    insertKeys: plan.inserts.map((n) => keysJson(n.keys)),
    insertContexts: plan.inserts.map((n) => position(n.contextJson)),
    changeOperations: plan.changes.map((c) => c.operation),
    changeReasons: plan.changes.map((c) => c.reason),
    changeTypes: plan.changes.map((c) => c.type),
    changeKeys: plan.changes.map((c) => keysJson(c.keys)),
    changeContexts: plan.changes.map((c) => position(c.contextJson)),
    updateExpiresAt: plan.updates.map((u) => u.expiry.at),
    updateTtlSeconds: plan.updates.map((u) => u.expiry.ttlSeconds),
    insertExpiresAt: plan.inserts.map((n) => n.expiry.at),
    insertTtlSeconds: plan.inserts.map((n) => n.expiry.ttlSeconds),
    changeExpiresAt: plan.changes.map((c) => c.expiry.at),
    changeTtlSeconds: plan.changes.map((c) => c.expiry.ttlSeconds),
    changeUids: plan.changes.map((c) => c.uid),
    changeAddedAt: plan.changes.map((c) => c.addedAt),
    insertUids: plan.inserts.map((n) => n.uid),
    ...origin,
  };
  return APPLY_PARAMETERS.values({ ...named, contexts: [...contexts.keys()] });
}

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
   * Of `keys`, those whose object was added or updated by a native write (not a source run, the expiry job
   * or an extension) in its current life: the `api` claim of extensions §13, read from the object's change
   * records. A record without attribution (written before it was recorded) counts as native, so an object
   * of unknown origin is never withdrawn. Run under the collection's exclusive writer lock, so no native
   * write can land between this read and the withdrawal it decides.
   */
  async nativelyClaimed(manager: EntityManager, collectionId: number, keys: ObjectKey[]): Promise<ObjectKey[]> {
    if (keys.length === 0) return [];
    return manager.query(
      `SELECT k.key_type AS type, k.value
         FROM unnest($2::text[], $3::text[]) AS w(type, value)
         JOIN intel_object_key k ON k.collection_id = $1 AND k.key_type = w.type AND k.value = w.value
         JOIN intel_object o ON o.id = k.object_id
        WHERE EXISTS (SELECT 1 FROM intel_change c
                       WHERE c.collection_id = $1 AND c.object_uid = o.uid AND c.operation IN ('Add', 'Update')
                         AND (c.via IS NULL OR c.via = ANY($4::text[])))`,
      [collectionId, keys.map((key) => key.type), keys.map((key) => key.value), NATIVE_VIAS],
    );
  }

  /**
   * Writes the plan's net effect and its change records; the caller holds the collection's exclusive
   * writer lock. Returns the ids of the first and last record, or null when the plan records none.
   */
  async apply(manager: EntityManager, origin: WriteOrigin, collectionId: number, plan: BatchPlan): Promise<RecordedIds | null> {
    if (plan.deletes.length > 0) {
      await manager.query(`DELETE FROM intel_object WHERE collection_id = $1 AND id = ANY($2::bigint[])`, [
        collectionId,
        plan.deletes,
      ]);
    }
    if (plan.changes.length === 0) return null;
    const [recorded]: RecordedIds[] = await manager.query(APPLY, applyParameters(collectionId, plan, origin));
    for (const change of plan.changes) this.metrics.changesWritten.labels(change.operation).inc();
    return recorded;
  }
}
