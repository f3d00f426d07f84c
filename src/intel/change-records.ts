/**
 * The one place where change records are numbered and written, for single writes, batches and expiries
 * alike (ObjectsRepository, BatchRepository). All build their statements from these fragments, so a rule
 * about recording a change (what is stored, what is signalled) is made here once. What is announced after
 * the commit (long-poll wake-ups, domain events) goes through ChangesService.announce, also once.
 *
 * Numbering: `nextSeqs` moves the collection's last_seq by the number of changes the statement records,
 * and takes the collection row lock until commit; see ChangesService for why that makes the feed
 * gap-free in commit order. A batch takes its whole range of numbers in one go, so single writes and
 * batches interleave on the same lock without gaps. $1 is the collection id in both fragments.
 */

/** CTE `seq(last_seq)`: the collection's newest sequence number after taking `count` (an SQL expression) more. */
export function nextSeqs(count: string): string {
  return `seq AS (UPDATE intel_collection SET last_seq = last_seq + ${count} WHERE id = $1::int RETURNING last_seq)`;
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
 * The INSERT of change records from `rows`, a query yielding `(seq, operation, reason, type, keys, context,
 * expires_at)` per change: the object's state after the change (its last state for a Remove), and for a
 * Remove why it went (`Deleted` or `Expired`; NULL otherwise).
 */
export function insertChanges(rows: string): string {
  return `INSERT INTO intel_change (collection_id, seq, operation, reason, object)
      SELECT $1::int, c.seq, c.operation, c.reason, ${objectJson('c')}
        FROM (${rows}) AS c(seq, operation, reason, type, keys, context, expires_at)`;
}

/**
 * The expiry of a written object: `at` (a timestamptz parameter) a fixed moment, or `ttl` (an integer
 * parameter) seconds after the transaction's start, to the millisecond, or none when both are null.
 */
export function expiresAt(at: string, ttl: string): string {
  return `COALESCE(${at}::timestamptz, date_trunc('milliseconds', now()) + make_interval(secs => ${ttl}::int))`;
}
