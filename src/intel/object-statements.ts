/**
 * The statements of single adds and deletes and of the keyset pages of objects and changes
 * (ObjectsRepository), as text with their parameters, in a module that imports nothing but other SQL
 * fragments and the named-parameters helper (no framework): the bench (bench/rows/service-statements.ts,
 * bench/floor/) loads them from the service build, so its raw `pg` baselines run exactly these statements
 * and cannot drift from them.
 */
import { sizeBoundedPage } from '../common/pagination/size-bounded-page.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoUtc } from '../common/sql/timestamps.js';
import { scoreSql } from '../scoring/score-sql.js';
import { API_CLAIM_FRESHNESS, apiClaimBehind, apiClaimOnInsert, apiClaimOnUpdate, apiMarkingHeld } from './api-claim.js';
import { expiresAt, insertChanges, ORIGIN_PARAMETERS, PREVIOUS_MARKING, SHARED_WRITER_LOCK, type OriginPlaceholders } from './change-records.js';
import { CLAIMED_MARKING } from './claimed-marking.js';
import type { ChangeOperation, RemoveReason } from './entities/change.entity.js';

/** The written object's columns, as every write statement returns them. */
export const WRITTEN_OBJECT = (row: string) => `${row}.type, ${row}.keys, ${row}.context, ${isoUtc(`${row}.expires_at`)} AS "expiresAt"`;

/** Live objects only: an expired one is gone from every read at once, before the expiry job removes it. */
export const LIVE = (row: string) => `(${row}.expires_at IS NULL OR ${row}.expires_at > now())`;

/**
 * Liveness for the decision of an add, delete or batch: as of the start of the statement that reads the
 * objects. Under the collection's exclusive lock that statement runs after the wait for the lock; now() would
 * be the start of the transaction, before that wait, and count an object that expired meanwhile as live.
 * Such a statement also returns that time (`decidedAt`): the objects it found expired are removed as expired
 * as of it, whatever the clock says by then (a wall clock set back would otherwise leave them in place).
 */
export const LIVE_AT_DECISION = (row: string) => `(${row}.expires_at IS NULL OR ${row}.expires_at > statement_timestamp())`;

/**
 * Liveness for a write of an object's row, in a statement joined to `lk`: as of the moment the statement
 * holds the collection's lock and the row, after any wait for either. The statement's start would count an
 * object that expired during the wait (for a batch holding the lock, or another writer of the row) as live,
 * and an add would update it instead of recording its expiry and adding it anew. Naming `lk` keeps
 * PostgreSQL from checking it while scanning the row, before the lock is held (it is a condition of the
 * join then); the clock is read again when PostgreSQL re-checks a row another writer changed meanwhile.
 * Objects only ever go from live to expired, so a write that finds its object expired is decided again,
 * and the decision sees it so.
 */
const LIVE_AT_WRITE = (row: string) => `(${row}.expires_at IS NULL OR ${row}.expires_at > GREATEST(lk.granted_at, clock_timestamp()))`;

/**
 * Ids of the objects of collection $1 that own any of the keys ($2 types, $3 values, in pairs): one probe
 * of the key table's primary key per submitted key, whatever the statistics say. As a plain join, a
 * collection that grew since the last ANALYZE was estimated at one key row, and PostgreSQL scanned all of
 * its keys once and compared each with every submitted key (a batch of 1,000 into a collection of 20k new
 * objects: 20M comparisons, 1.4 s per batch, measured by bench row 10). The LIMIT (a key has one row per
 * collection anyway) keeps the lateral probe from being flattened into such a join.
 */
export const OWNING_OBJECT_IDS = `SELECT k.object_id FROM unnest($2::text[], $3::text[]) AS q(type, value)
                         CROSS JOIN LATERAL (SELECT object_id FROM intel_object_key
                                              WHERE key_type = q.type AND value = q.value AND collection_id = $1
                                              LIMIT 1) k`;

/**
 * The parameters of each write statement, by name (`collectionId` first: the writer lock and the record
 * name it `$1`), then the write's origin (ORIGIN_PARAMETERS). ObjectsRepository fills them by name. `tlp`:
 * the marking of the api claim the write makes (a rank; null for a source's write, see api-claim.ts);
 * `reliability`: the origin's, which the api claim takes (WriteOrigin). `refresh`: the api claims of the
 * objects `objectIds` an identical re-send refreshes (no change record).
 */
export const WRITE_PARAMETERS = {
  insert: namedParameters(['collectionId', 'type', 'keys', 'context', 'expiresAt', 'ttlSeconds', 'tlp', 'reliability', ...ORIGIN_PARAMETERS]),
  update: namedParameters([
    'collectionId',
    'objectId',
    'keys',
    'context',
    'newKeys',
    'expiresAt',
    'ttlSeconds',
    'decidedOnKeys',
    'tlp',
    'reliability',
    ...ORIGIN_PARAMETERS,
  ]),
  remove: namedParameters(['collectionId', 'keyType', 'keyValue', 'uid', ...ORIGIN_PARAMETERS]),
  refresh: namedParameters(['collectionId', 'objectIds', 'reliability']),
};

/**
 * The marking before the change, by operation: none for an Add; for an Update the row's `was_tlp`, which the
 * UPDATE set from the version it locked (PREVIOUS_MARKING); a Remove leaves the marking as it was.
 */
const MARKING_BEFORE: Record<ChangeOperation, string> = { Add: 'NULL::smallint', Update: 'obj.was_tlp', Remove: 'obj.tlp' };

/**
 * The change record, built from what `obj` RETURNING says was stored; yields the written object (or no row).
 * `afterKeys`: the record is inserted only once `new_keys` has run. Its id orders the feed within a
 * numbering pass, so it must be taken after any wait for a conflicting writer's key rows: PostgreSQL runs
 * unreferenced data-modifying CTEs last-declared first, and an insert's record, taken before it waited for a
 * racing delete of the same key to commit, came out ahead of that delete's Remove (Add, Add, Remove).
 */
function recordingChange(origin: OriginPlaceholders, operation: ChangeOperation, reason: RemoveReason | null = null, afterKeys = false): string {
  const record = {
    order: '1',
    operation: `'${operation}'`,
    reason: reason === null ? 'NULL::text' : `'${reason}'`,
    type: 'obj.type',
    keys: 'obj.keys',
    context: 'obj.context',
    expiresAt: 'obj.expires_at',
    uid: 'obj.uid',
    addedAt: 'obj.added_at',
    tlp: 'obj.tlp',
    wasTlp: MARKING_BEFORE[operation],
  };
  const besides = afterKeys ? '(SELECT count(*) FROM new_keys) AS keys_written' : undefined;
  return `,
    change AS (
      ${insertChanges({ record, from: 'FROM obj', besides }, origin)}
    )
    SELECT ${WRITTEN_OBJECT('obj')} FROM obj`;
}

/**
 * The key rows of a written object, inserted in one order whatever the order the client sent: two inserts
 * under the shared writer lock naming the same keys then meet on the first of them (one waits, then fails
 * as a taken key) instead of each holding a key the other waits for (a deadlock).
 */
const ADD_KEYS = (keysParam: string) => `,
    new_keys AS (
      INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
      SELECT $1::int, k.type, k.value, obj.id FROM obj, jsonb_to_recordset(${keysParam}::jsonb) AS k(type text, value text)
       ORDER BY k.type, k.value
      RETURNING 1
    )`;

const [I, U, R, F] = [WRITE_PARAMETERS.insert.$, WRITE_PARAMETERS.update.$, WRITE_PARAMETERS.remove.$, WRITE_PARAMETERS.refresh.$];

/**
 * Every write statement first takes the collection's writer lock in shared mode (`lk`, see
 * change-records.ts): a single write runs beside other single writes but never inside a decision made
 * under the exclusive lock (in a transaction that holds it already, the shared request does not wait).
 *
 * The update is a compare-and-set on the object's row: it writes only while the object is exactly as the
 * add was decided on (`decidedOnKeys` its keys, live, and not by now equal to what the add would write, its
 * api claim's marking included), which
 * UPDATE checks on the row's latest committed version once it holds the row lock (READ COMMITTED
 * re-evaluates the WHERE after waiting for a concurrent writer of the row). Keys only ever join an object
 * and leave with it, so its unchanged key list means every key the add names is still its own or among
 * `newKeys`, whose rows the statement inserts: a key some other writer took meanwhile (committed or in flight)
 * fails the statement on the key table's primary key. No row (or that failure) means: decide again
 * (ObjectsService.add, under the exclusive lock). So two updates of different objects of one collection
 * wait for nothing of each other; two of one object queue on its row, the second's record id drawn after
 * the first committed.
 */
const WRITE_SQL = {
  insert: `
    WITH ${SHARED_WRITER_LOCK},
    obj AS (
      INSERT INTO intel_object (collection_id, type, keys, context, expires_at, api_first_seen_at, api_last_seen_at, api_tlp, api_reliability, claimed_tlp)
      SELECT ${I.collectionId}::int, ${I.type}::text, ${I.keys}::jsonb, ${I.context}::jsonb, ${expiresAt(I.expiresAt, I.ttlSeconds)},
             ${apiClaimOnInsert(I.via, I.tlp, I.reliability)}, ${CLAIMED_MARKING(`${I.keys}::jsonb`, `(SELECT name FROM intel_collection WHERE id = ${I.collectionId}::int)`)} FROM lk
      RETURNING id, type, keys, context, expires_at, uid, added_at, tlp
    )${ADD_KEYS(I.keys)}${recordingChange(I, 'Add', null, true)}`,
  update: `
    WITH ${SHARED_WRITER_LOCK},
    obj AS (
      UPDATE intel_object o SET keys = ${U.keys}::jsonb, context = ${U.context}::jsonb, expires_at = ${expiresAt(U.expiresAt, U.ttlSeconds)},
             ${apiClaimOnUpdate('o', U.via, U.tlp, U.reliability)}, ${PREVIOUS_MARKING('o')}
        FROM lk
       WHERE o.id = ${U.objectId}::bigint AND o.keys = ${U.decidedOnKeys}::jsonb AND ${LIVE_AT_WRITE('o')}
         AND NOT (jsonb_array_length(${U.newKeys}::jsonb) = 0 AND ${U.ttlSeconds}::int IS NULL AND o.context = ${U.context}::jsonb
                  AND o.expires_at IS NOT DISTINCT FROM ${U.expiresAt}::timestamptz AND ${apiMarkingHeld('o', U.via, U.tlp)})
      RETURNING o.id, o.type, o.keys, o.context, o.expires_at, o.uid, o.added_at, o.tlp, o.was_tlp
    )${ADD_KEYS(U.newKeys)}${recordingChange(U, 'Update', null, true)}`,
  // The key rows go with the object (ON DELETE CASCADE). An expired object is already gone: the expiry
  // job (or the next add of its keys) removes it, with reason Expired.
  remove: `
    WITH ${SHARED_WRITER_LOCK},
    obj AS (
      DELETE FROM intel_object o USING intel_object_key k, lk
       WHERE k.collection_id = ${R.collectionId}::int AND k.key_type = ${R.keyType}::text AND k.value = ${R.keyValue}::text AND o.id = k.object_id
         AND ${LIVE_AT_WRITE('o')} AND (${R.uid}::uuid IS NULL OR o.uid = ${R.uid}::uuid)
      RETURNING o.id, o.type, o.keys, o.context, o.expires_at, o.uid, o.added_at, o.tlp
    )${recordingChange(R, 'Remove', 'Deleted')}`,
  // The api claims of live objects an identical native re-send names, where they are behind (api-claim.ts):
  // their last time and reliability only, no change record (the object did not change). Checked on the
  // row as locked, so concurrent re-sends leave the highest reliability. The caller bumps the score version
  // in the same transaction when it refreshed any.
  refresh: `
    WITH ${SHARED_WRITER_LOCK},
    refreshed AS (
      UPDATE intel_object o SET api_last_seen_at = now(), api_reliability = GREATEST(o.api_reliability, ${F.reliability}::smallint), ${PREVIOUS_MARKING('o')}
        FROM lk
       WHERE o.id = ANY(${F.objectIds}::bigint[]) AND o.collection_id = ${F.collectionId}::int AND o.api_first_seen_at IS NOT NULL
         AND ${LIVE_AT_WRITE('o')} AND ${apiClaimBehind('o', F.reliability)}
      RETURNING 1
    )
    SELECT count(*)::int AS refreshed FROM refreshed`,
} as const;

/** The objects owning any of the keys, for the add and delete rules (ObjectsRepository.findHits). */
const FIND_HITS_SQL = `SELECT o.id, o.keys, o.context = $4::jsonb AS "sameContext", o.api_tlp AS "apiTlp", ${API_CLAIM_FRESHNESS('o')},
          CASE WHEN $5::boolean THEN o.expires_at IS NOT DISTINCT FROM $6::timestamptz END AS "sameExpiry",
          NOT ${LIVE_AT_DECISION('o')} AS expired, statement_timestamp()::text AS "decidedAt"
     FROM intel_object o
    WHERE o.id IN (${OWNING_OBJECT_IDS})`;

/**
 * FIND_HITS' values: the collection, the keys (types and values in pairs), the context to compare (JSON
 * text, or null), and the expiry the add would write, compared only when it would not move it (a fixed
 * moment or none; a TTL always moves it).
 */
export function findHitsParameters(
  collectionId: number,
  keys: readonly { type: string; value: string }[],
  context: string | null,
  expiry: { at: string | null; ttlSeconds: number | null } | null,
): unknown[] {
  return [collectionId, keys.map((key) => key.type), keys.map((key) => key.value), context, expiry !== null && expiry.ttlSeconds === null, expiry?.at ?? null];
}

/**
 * Each statement with the name it is prepared under (per pooled connection; see PreparedStatement); their
 * values: findHitsParameters, WRITE_PARAMETERS.
 */
export const OBJECT_STATEMENTS = {
  findHits: { name: 'intel_find_hits', text: FIND_HITS_SQL },
  insert: { name: 'intel_write_insert', text: WRITE_SQL.insert },
  update: { name: 'intel_write_update', text: WRITE_SQL.update },
  remove: { name: 'intel_write_remove', text: WRITE_SQL.remove },
  refresh: { name: 'intel_write_refresh', text: WRITE_SQL.refresh },
} as const;

/**
 * A change record `ch` as a key with a ceiling below RED sees it (extensions §19 "Feed per key"), judged by the
 * markings it carries, after (`tlp`) and before (`was_tlp`, NULL for an Add) the change:
 * - within the ceiling after: as it is, except an Update from above it (or from an unknown marking), which
 *   brings the object within reach: an `Add`;
 * - above it after but within before (an Update that raised it): a `Remove` with reason `Restricted`, carrying
 *   the object as the key last saw it: the object's previous record and marking (nothing of the raising
 *   change: its context, a key that joined with it, its expiry, its marking). Where history's retention removed that record (no change
 *   of the object for HISTORY_RETENTION_DAYS), its type and current keys alone;
 * - above it both before and after, or an Add or Remove above it: not shown (`operation` NULL; nothing of the
 *   record leaves the database).
 * The previous record is read only for a `Restricted` one, by the (collection_id, object_uid, seq) index.
 */
const RECORD_AS_SEEN = {
  /** The class of `ch` for a ceiling (an SQL expression): its operation as seen, `Restricted`, or NULL (not shown). */
  seen: (ceiling: string) => `CASE
      WHEN ch.tlp <= ${ceiling} THEN CASE WHEN ch.operation = 'Update' AND NOT COALESCE(ch.was_tlp <= ${ceiling}, false) THEN 'Add' ELSE ch.operation END
      WHEN ch.operation = 'Update' AND ch.was_tlp <= ${ceiling} THEN 'Restricted'
    END`,
  columns: `CASE WHEN s.seen = 'Restricted' THEN 'Remove' ELSE s.seen END AS operation,
      CASE WHEN s.seen = 'Restricted'
           THEN COALESCE((SELECT p.object FROM intel_change p
                           WHERE p.collection_id = ch.collection_id AND p.object_uid = ch.object_uid AND p.seq < ch.seq
                           ORDER BY p.seq DESC LIMIT 1),
                         jsonb_build_object('type', ch.object -> 'type', 'keys', ch.object -> 'keys', 'context', '{}'::jsonb))
           WHEN s.seen IS NOT NULL THEN ch.object END AS object,
      CASE WHEN s.seen = 'Restricted' THEN 'Restricted' WHEN s.seen = 'Remove' THEN COALESCE(ch.reason, 'Deleted') END AS reason,
      CASE WHEN s.seen = 'Restricted' THEN ch.was_tlp WHEN s.seen IS NOT NULL THEN ch.tlp END AS tlp`,
};

/**
 * The keyset pages read with the collection's feed bounds: $1 the collection, $2 the position to read
 * after, $3 the rows, $4 the byte cap (PAGE_MAX_BYTES, see sizeBoundedPage); each row's key is `position`.
 *
 * `listPage`: objects after an object id, the feed position it reflects (snapshot + later changes = the
 * collection, decisions §8). The shape leaves PostgreSQL one plan whatever its statistics say: a walk of
 * the (collection_id, id) index from ($1, $2), stopped by the LIMIT. The position is a row comparison on
 * that index's full key, which no other index can serve (there is no bare `id > $2` to walk the primary key
 * with), and the ORDER BY is exactly the index's columns, so there is nothing to sort. With
 * `collection_id = $1 AND id > $2` the planner could walk the primary key and filter (a young collection's
 * first page read every row of the older ones: 3829 buffers beside 100k objects, against 4), or, once the
 * cursor lay beyond the histogram (a burst ANALYZE has not seen), fetch the rest of the collection by the
 * primary key and sort it for every page. test/database/query-plans.e2e-spec.ts checks the plan. Expired
 * objects are hidden at once, before the expiry job removes them (a filter, not a key: the walk and its
 * bound stay as they are). `conditions` (the read policy's, starting with AND, parameters from $5) are
 * conditions on the walk too: a page reads objects until it has found its rows. Each row shows its score at $5
 * (`scoreAt`, extensions §18), computed for the rows of the page only (the select list of the rows the LIMIT
 * takes); a `minScore` condition computes it on the walk as well.
 *
 * `changesAfter`: changes after a position. Remove records written before reasons were recorded were all
 * explicit deletes. With a key's ceiling (`narrowing`, its placeholder) each record reads as the key may see
 * it (RECORD_AS_SEEN); the page still reads the next records by position, so its cursor moves past those the
 * key may not see.
 */
const FEED_PAGES = {
  listPage: (conditions: string) =>
    sizeBoundedPage(
      {
        select: `id AS position, ${WRITTEN_OBJECT('intel_object')}, intel_object.tlp, ${scoreSql('intel_object', '$5')} AS score`,
        from: `FROM intel_object WHERE (collection_id, id) > ($1, $2) AND collection_id <= $1 AND ${LIVE('intel_object')}${conditions}`,
        orderBy: 'collection_id, id',
        rowBytes: 'row_bytes',
      },
      '$3',
      '$4',
    ),
  changesAfter: (ceiling: string) =>
    sizeBoundedPage(
      ceiling === ''
        ? {
            select: `seq AS position, operation, object, CASE WHEN operation = 'Remove' THEN COALESCE(reason, 'Deleted') END AS reason, tlp`,
            from: 'FROM intel_change WHERE collection_id = $1 AND seq > $2',
            orderBy: 'seq',
            rowBytes: 'row_bytes',
          }
        : {
            select: `ch.seq AS position, ${RECORD_AS_SEEN.columns}`,
            from: `FROM intel_change ch CROSS JOIN LATERAL (SELECT ${RECORD_AS_SEEN.seen(ceiling)} AS seen) s
                  WHERE ch.collection_id = $1 AND ch.seq > $2`,
            orderBy: 'ch.seq',
            rowBytes: 'ch.row_bytes',
          },
      '$3',
      '$4',
    ),
};

export type FeedPage = keyof typeof FEED_PAGES;

/**
 * A page of FEED_PAGES together with the collection's feed bounds, in ONE statement: a statement sees one
 * snapshot, so the bounds are exactly those of the rows, without a REPEATABLE READ transaction's extra round
 * trips. `pending`: the collection has committed change records the sequencer has not numbered yet (a look
 * at the small partial index of unnumbered records).
 *
 * With `numbering` (the sequencer's CTEs, ChangeSequencer.numberAndRead) the same statement also numbers
 * every committed record of the collection, and `lastSeq` counts them: the rows and the bounds then cover
 * exactly the changes committed before the statement's snapshot, none of them unnumbered.
 *
 * `narrowing`: for `listPage` the read policy's conditions on the object row, for `changesAfter` the key's
 * ceiling (its placeholder) when it is below RED; empty: the statement as it was before either.
 */
export function feedPageStatement(page: FeedPage, numbering?: string, narrowing = ''): string {
  return `${numbering ? `WITH ${numbering}` : ''}
         SELECT c.last_seq ${numbering ? '+ (SELECT count(*) FROM unnumbered)' : ''} AS "lastSeq", c.pruned_seq AS "prunedSeq",
                EXISTS (SELECT 1 FROM intel_change p WHERE p.seq IS NULL AND p.collection_id = $1::int) AS pending, r.*
           FROM intel_collection c
           LEFT JOIN (${FEED_PAGES[page](narrowing)}) r ON true
          WHERE c.id = $1::int
          ORDER BY r.position`;
}

/** The pages as ObjectFeedRepository reads them without numbering, and their parameters by name (the listing's scores' time last). */
export const FEED_STATEMENTS = {
  listPage: feedPageStatement('listPage'),
  changesAfter: feedPageStatement('changesAfter'),
  parameters: {
    listPage: namedParameters(['collectionId', 'after', 'limit', 'maxBytes', 'scoreAt']),
    changesAfter: namedParameters(['collectionId', 'after', 'limit', 'maxBytes']),
  },
} as const;
