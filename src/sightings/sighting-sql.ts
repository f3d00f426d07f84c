/**
 * The SQL fragments of sightings that other areas' statements embed (the lookup's summaries, the filters
 * of listings and exports), kept here with the tables they read, in a module that imports nothing but SQL
 * helpers, so that the statements embedding them stay loadable by the bench from the service build.
 */
import { isoUtc } from '../common/sql/timestamps.js';
import type { SightingFilter } from './sighting-filter.js';

/**
 * The rows of `table` (aliased `alias`) of the keys in `keys`, a jsonb array of `{type, value}`: one
 * primary-key probe per key. As a plain join the planner, which counts 100 rows for any
 * jsonb_array_elements (an object has one to four keys), hashed the keys and scanned the whole table once
 * per object: 13 ms an object, 6.7 s for a lookup finding 500 sighted objects (bench row 21b). A LATERAL
 * subquery with OFFSET 0 is never flattened into the join, so it runs per key, by the index.
 */
const ofKeys = (keys: string, table: string, alias: string) =>
  `FROM jsonb_array_elements(${keys}) ${alias}k
   CROSS JOIN LATERAL (SELECT * FROM ${table} WHERE key_type = ${alias}k->>'type' AND key_value = ${alias}k->>'value' OFFSET 0) ${alias}`;

/**
 * The summary of an object whose keys are the jsonb array `keys`, as a jsonb view (null when none of its
 * keys was sighted): the per-key totals added up, and the distinct sources of all its keys counted once.
 * With one sighted key, most objects, that is the key's own `sources` (one probe); with several, a source
 * seen on two of them counts once, so they are counted from `sighting_source`, which keeps them per key (a
 * CASE evaluates that subquery only then). A scalar subquery, so that a statement listing objects (lookup)
 * shows their summaries without another round trip; kept here with the tables it reads. Sums of bigints
 * are exact in jsonb numbers, and in JSON up to 2^53.
 */
export function sightingSummarySql(keys: string): string {
  return `(SELECT jsonb_build_object('count', sum(s.count), 'falsePositives', sum(s.false_positives),
                 'firstAt', ${isoUtc('min(s.first_at)')}, 'lastAt', ${isoUtc('max(s.last_at)')},
                 'sources', CASE WHEN count(*) = 1 THEN max(s.sources)
                                 ELSE (SELECT count(DISTINCT src.source) ${ofKeys(keys, 'sighting_source', 'src')}) END)
            ${ofKeys(keys, 'sighting_summary', 's')}
          HAVING count(*) > 0)`;
}

/** The per-key totals of the keys of object `o` (its `keys` jsonb), by primary key (see ofKeys). */
const totalsOf = (o: string) => ofKeys(`${o}.keys`, 'sighting_summary', 'fs');

/**
 * The filter as SQL conditions (each starting with AND) on the object row `o`; `since` names the parameter
 * that carries `sightedSince`. Kept here with the tables they read: listings and exports only embed them.
 * The summaries are lifetime totals (never lowered by roll-up or retention), so a filter does not depend
 * on when it runs, only on what was recorded: see `SIGHTING_VERSION`.
 */
export function sightingConditions(o: string, filter: SightingFilter, since: string): string {
  return (
    (filter.sightedSince === null ? '' : ` AND EXISTS (SELECT ${totalsOf(o)} WHERE fs.last_at >= ${since}::timestamptz)`) +
    (filter.excludeFalsePositives ? ` AND (SELECT coalesce(sum(fs.false_positives), 0) <= coalesce(sum(fs.count), 0) ${totalsOf(o)})` : '')
  );
}

/**
 * A version of every summary at once: the sum of all counts ever recorded, kept in a few rows (a row per
 * shard, so writers seldom wait on one another) and added to in the statement that records. It rises with
 * every request that records anything and never falls, so two snapshots with the same version see the same
 * summaries: the later one sees every recording the earlier one saw, and none more, or the sum would differ.
 * An export filtered by sightings adds it to its ETag.
 */
export const SIGHTING_VERSION = `(SELECT coalesce(sum(total), 0)::text FROM sighting_tally)`;
