/**
 * The one place where change records are numbered and written, for single writes and batches alike
 * (ObjectsRepository, BatchRepository). Both build their statements from these two fragments, so a rule
 * about recording a change (what is stored, what is signalled) is made here once.
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

/**
 * The INSERT of change records from `rows`, a query yielding `(seq, operation, type, keys, context)`
 * per change: the object's state after the change (its last state for a Remove).
 */
export function insertChanges(rows: string): string {
  return `INSERT INTO intel_change (collection_id, seq, operation, object)
      SELECT $1::int, c.seq, c.operation, jsonb_build_object('type', c.type, 'keys', c.keys, 'context', c.context)
        FROM (${rows}) AS c(seq, operation, type, keys, context)`;
}
