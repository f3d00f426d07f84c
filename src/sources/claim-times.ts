/**
 * The SQL of a claim's times that other statements embed (the score's, src/scoring/score-sql.ts): a module of
 * SQL text alone, so the statements embedding it stay loadable by the bench from the service build.
 */

/**
 * When a claim (row `c` of sources_claim, `s` its source) was last listed. Runs that repeat the previous
 * body (a 304, or the same normalised objects) count as runs of it (extensions §13) but write no claim row,
 * so that a million-claim source costs nothing per such run: a snapshot claim no run has missed yet was
 * listed by the body of the source's last success, whichever run that was (a suspect run is none, and the
 * claims it listed have their own time), so it was seen then.
 */
export const lastSeenOf = (c: string, s: string) =>
  `CASE WHEN ${c}.missed_runs = 0 AND ${s}.settings->>'mode' = 'snapshot' THEN GREATEST(${c}.last_seen_at, ${s}.last_success_at) ELSE ${c}.last_seen_at END`;
