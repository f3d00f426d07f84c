/**
 * The one place where change records are written, for single writes, batches and expiries alike
 * (ObjectsRepository, BatchRepository, ObjectExpiryRepository). All build their statements from these
 * fragments, so a rule about recording a change (what is stored, in which order) is made here once. What
 * happens after the commit (the sequencer's kick, domain events) goes through ChangesService.announce, also once.
 *
 * A record is written without its feed position: it gets an `id` from an identity when it is inserted,
 * and the sequencer (change-sequencer.ts) gives it its `seq` once it has committed. So writers of one
 * collection share no counter and commit in parallel; see CONTRIBUTING.md, "The change feed".
 *
 * The collection's writer lock (an advisory lock per collection, in two modes) keeps the rules of
 * decisions §7 race-free without a counter: writers that decide over many objects from what they read
 * first (a batch, the expiry job, a single add whose first decision went stale) take it EXCLUSIVE for their
 * whole transaction (`lockCollection`); single writes are one statement each that checks its own decision
 * under the rows it writes (see object-statements.ts) and take it SHARED, so they run in parallel with each
 * other but never in the middle of a decision. $1 is the collection id in every fragment.
 */

import { isoUtc } from '../common/sql/timestamps.js';
import { WRITER_LOCK_CLASS } from '../database/advisory-locks.js';
import type { WriteOrigin } from './write-origin.js';

/**
 * CTE `lk`: the collection's writer lock in SHARED mode, to the end of the transaction. A statement
 * selects FROM `lk` before it touches any row, which makes PostgreSQL take the lock first (data-modifying
 * CTEs run in no guaranteed order otherwise). `granted_at`: when the lock was held (the select list runs in
 * order); a condition that names it is checked only once `lk` has its row, i.e. after any wait for the lock.
 */
export const SHARED_WRITER_LOCK = `lk AS (SELECT pg_advisory_xact_lock_shared(${WRITER_LOCK_CLASS}, $1::int), clock_timestamp() AS granted_at)`;

/** The collection's writer lock in EXCLUSIVE mode, to the end of the transaction (one statement). */
export const EXCLUSIVE_WRITER_LOCK = `SELECT pg_advisory_xact_lock(${WRITER_LOCK_CLASS}, $1::int)`;

/** The ids of the change records one statement wrote (bigint, as text), first and last. */
export interface RecordedIds {
  firstId: string;
  lastId: string;
}

/** The object view (type, keys, context, expiresAt when set) as jsonb, from a row with the object's columns. */
export function objectJson(row: string): string {
  return `jsonb_build_object('type', ${row}.type, 'keys', ${row}.keys, 'context', ${row}.context)
    || CASE WHEN ${row}.expires_at IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('expiresAt', ${isoUtc(`${row}.expires_at`)}) END`;
}

/**
 * One change record, named: each field an SQL expression over the rows of the statement that records it.
 * `order` is its order within the statement; `type` to `expiresAt` the object's state after the change (its
 * last state for a Remove); `reason` why it went for a Remove (`Deleted` or `Expired`; NULL otherwise);
 * `uid` and `addedAt` the object's life (intel_object's columns; a re-add is a new life); `tlp` the object's
 * marking after the change (its marking for a Remove) and `wasTlp` before it (NULL for an Add; `tlp` for a
 * Remove), as ranks (smallint): what the feed needs to tell, per key, whether the change crossed the key's
 * ceiling (extensions §19). A single write takes both from its row (RETURNING `tlp` and `was_tlp`, which
 * every UPDATE sets, `PREVIOUS_MARKING`).
 */
export interface ChangeRecord {
  order: string;
  operation: string;
  reason: string;
  type: string;
  keys: string;
  context: string;
  expiresAt: string;
  uid: string;
  addedAt: string;
  tlp: string;
  wasTlp: string;
}

/** The column of each field in the rows `insertChanges` reads (`c`): the one place a record becomes a column list. */
const RECORD_COLUMNS: { readonly [Field in keyof ChangeRecord]: string } = {
  order: 'n',
  operation: 'operation',
  reason: 'reason',
  type: 'type',
  keys: 'keys',
  context: 'context',
  expiresAt: 'expires_at',
  uid: 'uid',
  addedAt: 'added_at',
  tlp: 'tlp',
  wasTlp: 'was_tlp',
};
const RECORD_FIELDS = Object.keys(RECORD_COLUMNS) as (keyof ChangeRecord)[];

/**
 * The parameters that carry a write's origin (write-origin.ts) into every statement recording changes,
 * named as WriteOrigin's fields, so that `{ ...ownValues, ...origin }` fills them.
 */
export const ORIGIN_PARAMETERS = ['via', 'keyID', 'requestID', 'source'] as const satisfies readonly (keyof WriteOrigin)[];
export type OriginPlaceholders = { readonly [Name in (typeof ORIGIN_PARAMETERS)[number]]: string };

/** The change records of one statement: `record` evaluated for each row of `from` (a FROM clause and what follows). */
export interface RecordedRows {
  record: ChangeRecord;
  from: string;
  /** Select-list items evaluated with each row but not recorded (to make a CTE run before the record's id is drawn). */
  besides?: string;
}

/**
 * The INSERT of change records, attributed to the origin whose parameters `origin` names (the same for
 * every record of a statement: constants, no work per row beyond the columns).
 *
 * Ids are drawn in `order` (the identity is evaluated above the sort), so the sequencer, which numbers
 * by id, keeps a statement's records in that order. `from` must read the written object from the writing
 * CTE's RETURNING: then the id is drawn only once the writer holds the object's row, i.e. after every
 * earlier writer of that object committed, and two changes of one object get ids in commit order.
 */
export function insertChanges({ record, from, besides }: RecordedRows, origin: OriginPlaceholders): string {
  const values = RECORD_FIELDS.map((field) => record[field]).join(', ');
  const columns = RECORD_FIELDS.map((field) => RECORD_COLUMNS[field]).join(', ');
  return `INSERT INTO intel_change (collection_id, operation, reason, object, object_uid, object_added_at, tlp, was_tlp, via, key_id, request_id, source)
      SELECT $1::int, c.operation, c.reason, ${objectJson('c')}, c.uid, c.added_at, c.tlp, c.was_tlp,
             ${origin.via}::text, ${origin.keyID}::int, ${origin.requestID}::text, ${origin.source}::text
        FROM (SELECT ${values}${besides === undefined ? '' : `, ${besides}`} ${from}) AS c(${columns})
       ORDER BY c.n`;
}

/**
 * The SET item every UPDATE of intel_object carries: its marking before the update into `was_tlp`. SET
 * reads the row version the UPDATE locked (the latest committed one, after any wait for another writer),
 * so RETURNING `was_tlp` is the marking this very update changed, whatever ran concurrently.
 */
export const PREVIOUS_MARKING = (row: string) => `was_tlp = ${row}.tlp`;

/**
 * The expiry of a written object: `at` (a timestamptz parameter) a fixed moment, or `ttl` (an integer
 * parameter) seconds after the transaction's start, to the millisecond, or none when both are null.
 */
export function expiresAt(at: string, ttl: string): string {
  return `COALESCE(${at}::timestamptz, date_trunc('milliseconds', now()) + make_interval(secs => ${ttl}::int))`;
}
