/**
 * The one place where change records are written, for single writes, batches and expiries alike
 * (ObjectsRepository, BatchRepository). All build their statements from these fragments, so a rule about
 * recording a change (what is stored, in which order) is made here once. What happens after the commit
 * (the sequencer's kick, domain events) goes through ChangesService.announce, also once.
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

import { WRITER_LOCK_CLASS } from '../database/advisory-locks.js';

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

/** Milliseconds, ISO 8601 in UTC: the form of `expiresAt` in every view (stored truncated to milliseconds). */
const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** `expiresAt` of a view from a timestamptz expression (null stays null). */
export const isoUtc = (timestamp: string) => `to_char(${timestamp} AT TIME ZONE 'UTC', ${ISO_UTC})`;

/** The object view (type, keys, context, expiresAt when set) as jsonb, from a row with the object's columns. */
export function objectJson(row: string): string {
  return `jsonb_build_object('type', ${row}.type, 'keys', ${row}.keys, 'context', ${row}.context)
    || CASE WHEN ${row}.expires_at IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('expiresAt', ${isoUtc(`${row}.expires_at`)}) END`;
}

/**
 * The INSERT of change records from `rows`, a query yielding `(n, operation, reason, type, keys, context,
 * expires_at, uid, added_at)` per change: its order `n` within the statement, the object's state after the
 * change (its last state for a Remove), for a Remove why it went (`Deleted` or `Expired`; NULL otherwise),
 * and the object's life: its `uid` and first add `added_at` (intel_object's columns; a re-add is a new life).
 *
 * Ids are drawn in `n` order (the identity is evaluated above the sort), so the sequencer, which numbers
 * by id, keeps a statement's records in that order. `rows` must read the written object from the writing
 * CTE's RETURNING: then the id is drawn only once the writer holds the object's row, i.e. after every
 * earlier writer of that object committed, and two changes of one object get ids in commit order.
 */
export function insertChanges(rows: string): string {
  return `INSERT INTO intel_change (collection_id, operation, reason, object, object_uid, object_added_at)
      SELECT $1::int, c.operation, c.reason, ${objectJson('c')}, c.uid, c.added_at
        FROM (${rows}) AS c(n, operation, reason, type, keys, context, expires_at, uid, added_at)
       ORDER BY c.n`;
}

/**
 * The expiry of a written object: `at` (a timestamptz parameter) a fixed moment, or `ttl` (an integer
 * parameter) seconds after the transaction's start, to the millisecond, or none when both are null.
 */
export function expiresAt(at: string, ttl: string): string {
  return `COALESCE(${at}::timestamptz, date_trunc('milliseconds', now()) + make_interval(secs => ${ttl}::int))`;
}
