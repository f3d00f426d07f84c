/**
 * The statements of a batch's write (BatchRepository.apply), as text with their parameter builder, in a module
 * that imports nothing but SQL fragments and the named-parameters helper (no framework): the bench loads them
 * from the service build and seeds its data through them (bench/rows/seed.ts), so its seeded rows are
 * exactly what batches write and cannot drift from them.
 */
import type { ObjectKey } from '../../common/indicators/indicators.js';
import { namedParameters } from '../../common/sql/named-parameters.js';
import { apiClaimOnInsert, apiClaimOnUpdate } from '../api-claim.js';
import { EXCLUSIVE_WRITER_LOCK, expiresAt, insertChanges, ORIGIN_PARAMETERS, PREVIOUS_MARKING } from '../change-records.js';
import type { WriteOrigin } from '../write-origin.js';
import type { BatchPlan } from './batch-plan.js';

/**
 * APPLY's parameters, by name: `collectionId` ($1, as every recording statement has it), `contexts` (each
 * distinct context's JSON text once), then one array per column of each row set, then the write's origin (its
 * `reliability` the api claims', see api-claim.ts).
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
  'updateTlps',
  'insertTlps',
  'changeTlps',
  'changeWasTlps',
  'updateClaimedTlps',
  'insertClaimedTlps',
  'reliability',
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
 * for new objects: this statement's time, as for the new objects. The markings: each written object's api
 * claim (api-claim.ts, per row: each item may carry its own) and source claims' (claimed-marking.ts), and each
 * record's after and before, replayed by the plan from the owners and claims it read under the same exclusive
 * lock (see planBatch why they are the rows').
 */
const APPLY = `
    WITH ctx AS MATERIALIZED (SELECT t.i, t.c::jsonb AS context FROM unnest(${P.contexts}::text[]) WITH ORDINALITY AS t(c, i)),
    upd AS (
      UPDATE intel_object o SET keys = u.keys::jsonb, context = ctx.context, expires_at = ${expiresAt('u.at', 'u.ttl')},
             ${apiClaimOnUpdate('o', P.via, 'u.tlp', P.reliability)}, claimed_tlp = u.claimed, ${PREVIOUS_MARKING('o')}
        FROM unnest(${P.updateIds}::bigint[], ${P.updateKeys}::text[], ${P.updateContexts}::int[], ${P.updateExpiresAt}::timestamptz[], ${P.updateTtlSeconds}::int[],
                    ${P.updateTlps}::smallint[], ${P.updateClaimedTlps}::smallint[])
               AS u(id, keys, c, at, ttl, tlp, claimed) JOIN ctx ON ctx.i = u.c
       WHERE o.id = u.id AND o.collection_id = ${P.collectionId}::int
    ),
    upd_keys AS (
      INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
      SELECT ${P.collectionId}::int, k.type, k.value, k.id FROM unnest(${P.newKeyIds}::bigint[], ${P.newKeyTypes}::text[], ${P.newKeyValues}::text[]) AS k(id, type, value)
    ),
    new_obj AS MATERIALIZED (
      SELECT nextval(pg_get_serial_sequence('intel_object', 'id')) AS id, n.type, n.keys::jsonb AS keys, ctx.context,
             ${expiresAt('n.at', 'n.ttl')} AS expires_at, n.uid, n.tlp, n.claimed
        FROM unnest(${P.insertTypes}::text[], ${P.insertKeys}::text[], ${P.insertContexts}::int[], ${P.insertExpiresAt}::timestamptz[],
                    ${P.insertTtlSeconds}::int[], ${P.insertUids}::uuid[], ${P.insertTlps}::smallint[], ${P.insertClaimedTlps}::smallint[])
               AS n(type, keys, c, at, ttl, uid, tlp, claimed)
        JOIN ctx ON ctx.i = n.c
    ),
    ins AS (
      INSERT INTO intel_object (id, collection_id, type, keys, context, expires_at, uid, added_at, api_first_seen_at, api_last_seen_at, api_tlp, api_reliability, claimed_tlp)
      SELECT id, ${P.collectionId}::int, type, keys, context, expires_at, uid, now(), ${apiClaimOnInsert(P.via, 'new_obj.tlp', P.reliability)}, claimed FROM new_obj
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
            tlp: 'c.tlp',
            wasTlp: 'c.was_tlp',
          },
          from: `FROM unnest(${P.changeOperations}::text[], ${P.changeReasons}::text[], ${P.changeTypes}::text[], ${P.changeKeys}::text[], ${P.changeContexts}::int[],
                             ${P.changeExpiresAt}::timestamptz[], ${P.changeTtlSeconds}::int[], ${P.changeUids}::uuid[], ${P.changeAddedAt}::timestamptz[],
                             ${P.changeTlps}::smallint[], ${P.changeWasTlps}::smallint[])
                   WITH ORDINALITY AS c(operation, reason, type, keys, c, at, ttl, uid, added_at, tlp, was_tlp, n)
                 JOIN ctx ON ctx.i = c.c`,
        },
        P,
      )}
      RETURNING id
    )
    SELECT min(id) AS "firstId", max(id) AS "lastId" FROM change`;

/** What APPLY writes of a plan (its outcomes are the service's business, not the statement's). */
export type BatchWrite = Pick<BatchPlan, 'changes' | 'updates' | 'inserts'>;

/** The plan as APPLY's values: each context JSON text once, referred to by its position (from 1). */
function applyParameters(collectionId: number, plan: BatchWrite, origin: WriteOrigin): unknown[] {
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
    updateTlps: plan.updates.map((u) => u.tlp),
    insertTlps: plan.inserts.map((n) => n.tlp),
    changeTlps: plan.changes.map((c) => c.tlp),
    changeWasTlps: plan.changes.map((c) => c.wasTlp),
    updateClaimedTlps: plan.updates.map((u) => u.claimedTlp),
    insertClaimedTlps: plan.inserts.map((n) => n.claimedTlp),
    ...origin,
  };
  return APPLY_PARAMETERS.values({ ...named, contexts: [...contexts.keys()] });
}

/** The deletes of a batch, before APPLY (see there why in a statement of their own). */
const REMOVE = `DELETE FROM intel_object WHERE collection_id = $1 AND id = ANY($2::bigint[])`;

/**
 * A batch's write under the collection's exclusive writer lock, in one transaction: `lock` ($1 the
 * collection id), then the deletes (`remove`: $1 the collection id, $2 the object ids) when there are any,
 * then `apply` with `parameters(collectionId, plan, origin)` when the plan records changes.
 */
export const BATCH_STATEMENTS = { lock: EXCLUSIVE_WRITER_LOCK, remove: REMOVE, apply: APPLY, parameters: applyParameters } as const;
