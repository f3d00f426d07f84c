/**
 * The SQL of scores that other areas' statements embed, beside the functions of the Scoring migration
 * (intel_score, the formula; intel_object_score_inputs, the inputs claim by claim): a module that imports
 * nothing but SQL text, so the statements embedding it stay loadable by the bench.
 */

import { lastSeenOf } from '../sources/claim-times.js';

/** The value of an api claim's reliability rank (src/scoring/admiralty.ts: rankValue). */
const RANK_VALUE = (rank: string) => `(ARRAY[0, 25, 50, 50, 75, 100])[${rank} + 1]`;

/** The sources' claims (`c`, each of its source `s`) on the keys of `o` in the collection `col`, aggregated by `select`. */
const sourceClaims = (o: string, select: string) => `SELECT ${select}
      FROM sources_source s
      CROSS JOIN jsonb_array_elements(${o}.keys) ck
      JOIN sources_claim c ON c.source_id = s.id AND c.key_type = ck->>'type' AND c.value = ck->>'value'
     WHERE s.collection = col.name`;

/**
 * The score of the object row `o` (an alias of intel_object) at `at` (a timestamptz expression), or with
 * `decays: false` its score without decay: the reported integer, as every filter compares it (extensions §18),
 * read from its inputs where they live and computed by `intel_score`. One scalar subquery per row, embedded in
 * the statement that reads the rows (a SQL function taking the row cost 40 µs a call, most of it the call):
 * the sightings summaries of its keys by their primary key (OFFSET 0 keeps the lateral per key, as
 * src/sightings/sighting-sql.ts explains), its collection by its key, and its sources' claims only when it has
 * one (`claimed_tlp` is set exactly then: a run marks every object whose claims it makes or ends), per source
 * of the collection and key by the claims' primary key: one claim per source, its highest credibility among
 * the keys, its latest time seen. Factors multiply in ascending order (intel_product), as score.ts does.
 */
function scoreOf(o: string, at: string, decays: boolean): string {
  const apiFactor = `(150 - ${RANK_VALUE(`${o}.api_reliability`)})::float8 / 200`;
  const miss = `CASE WHEN ${o}.claimed_tlp IS NULL THEN COALESCE(${apiFactor}, 1)
      ELSE COALESCE((SELECT intel_product(x.f ORDER BY x.f) FROM (
             SELECT ${apiFactor} AS f WHERE ${o}.api_reliability IS NOT NULL
             UNION ALL
             ${sourceClaims(o, `(200 - max(s.reliability + COALESCE(c.credibility, s.credibility)))::float8 / 200`)} GROUP BY s.id) x), 1) END`;
  const claimed = `CASE WHEN ${o}.claimed_tlp IS NOT NULL THEN (${sourceClaims(o, `max(${lastSeenOf('c', 's')})`)}) END`;
  const decay = (member: string) => (decays ? `(col.scoring->'decay'->${o}.type->>'${member}')::float8` : 'NULL::float8');
  // intel_score is inlined (no call) only on plain arguments: the inputs are a row of their own first.
  return `(SELECT intel_score(v.miss, v.count, v.false_positives, v.anchor, v.lifetime, v.speed, ${o}.score_override, ${o}.score_override_until, (${at})::timestamptz)
     FROM (SELECT ${miss} AS miss, COALESCE(sum(ss.count), 0)::float8 AS count, COALESCE(sum(ss.false_positives), 0)::float8 AS false_positives,
                  COALESCE(GREATEST(${o}.api_last_seen_at, max(ss.last_at), ${claimed}), ${o}.added_at) AS anchor,
                  ${decay('lifetimeDays')} AS lifetime, ${decay('speed')} AS speed
             FROM intel_collection col
             LEFT JOIN LATERAL jsonb_array_elements(${o}.keys) sk ON true
             LEFT JOIN LATERAL (SELECT * FROM sighting_summary WHERE key_type = sk->>'type' AND key_value = sk->>'value' OFFSET 0) ss ON true
            WHERE col.id = ${o}.collection_id
            GROUP BY col.id) v)`;
}

/** The score of the object row `o` at `at`: see scoreOf. */
export const scoreSql = (o: string, at: string) => scoreOf(o, at, true);

/**
 * Adds one to the version of the score inputs (`score_tally`), in the transaction that changes an input which
 * writes no change record: a claim's credibility or a source's Admiralty values, an api claim's reliability
 * raised by an identical re-send, an override. A shard drawn at random, so writers seldom wait on each other.
 */
export const BUMP_SCORE_VERSION = `INSERT INTO score_tally (shard, total) VALUES (floor(random() * 8)::smallint, 1)
  ON CONFLICT (shard) DO UPDATE SET total = score_tally.total + 1`;

/**
 * The version of every score input at once (with SIGHTING_VERSION for the sightings): it rises with every
 * change and never falls, so two snapshots with the same version (and the same change-record position) see
 * the same inputs. ETags of bodies that show or filter by scores carry it.
 */
export const SCORE_VERSION = `(SELECT coalesce(sum(total), 0)::text FROM score_tally)`;

/**
 * The STIX `confidence` of the object row `o` now: its score without decay (`base × fp` rounded, or the
 * override's score while it holds), as confidenceOf in score.ts.
 */
export const confidenceSql = (o: string) => scoreOf(o, 'now()', false);

/**
 * The score inputs of the object row `o` (an alias of intel_object itself), claim by claim, as one jsonb
 * (StoredScoreInputs, src/scoring/score-inputs.ts): read by an SQL function of the Scoring migration, as
 * scoreSql reads them.
 */
export const scoreInputsSql = (o: string) => `intel_object_score_inputs(${o})`;
