/**
 * The SQL of scores that other areas' statements embed, kept with the functions of the Scoring migration:
 * a module that imports nothing but SQL helpers, so the statements embedding it stay loadable by the bench.
 */

/**
 * The score of the object row `o` (an alias of intel_object itself: the function takes the whole row) at `at`
 * (a timestamptz expression): the reported integer, as every filter compares it (extensions §18).
 */
export const scoreSql = (o: string, at: string) => `intel_object_score(${o}, ${at}::timestamptz)`;

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
 * The STIX `confidence` of the object row `o` (an alias of intel_object itself) now: its score without decay
 * (`base × fp` rounded, or the override's score while it holds), as confidenceOf in score.ts. Read through
 * intel_object_score at `-infinity`, where every decay is 1 (no time since the anchor); an override whose
 * `until` has passed is cleared first (at `-infinity` it would still hold), so it holds exactly as it does now.
 */
export const confidenceSql = (o: string) =>
  `intel_object_score(CASE WHEN ${o}.score_override_until <= now() THEN jsonb_populate_record(${o}, '{"score_override": null}') ELSE ${o} END,
                      '-infinity'::timestamptz)`;

/**
 * The score inputs of the object row `o` (an alias of intel_object itself) as one jsonb, read as intel_object_score
 * reads them (src/database/migrations/1796100000000-Scoring.ts; keep the two equal): `strengths` (per live claim,
 * reliability + credibility), `count` and `falsePositives` of its sightings, `anchorAt`, its collection's `decay`
 * for its type (null: none), the stored `override` and `until`. For what only the TypeScript twin finds (the time
 * a score falls below a bound: belowAt, src/scoring/score.ts).
 */
export const scoreInputsSql = (o: string) => `(
  SELECT jsonb_build_object(
           'strengths', COALESCE((SELECT jsonb_agg(x.s) FROM (
              SELECT ${o}.api_reliability + 50 AS s WHERE ${o}.api_reliability IS NOT NULL
              UNION ALL
              SELECT max(s.reliability + COALESCE(c.credibility, s.credibility))
                FROM jsonb_array_elements(${o}.keys) k
                CROSS JOIN LATERAL (SELECT * FROM sources_claim WHERE key_type = k->>'type' AND value = k->>'value' OFFSET 0) c
                JOIN sources_source s ON s.id = c.source_id
               WHERE ${o}.claimed_tlp IS NOT NULL AND s.collection = (SELECT name FROM intel_collection WHERE id = ${o}.collection_id)
               GROUP BY s.id) x), '[]'::jsonb),
           'count', COALESCE(sg.count, 0), 'falsePositives', COALESCE(sg.false_positives, 0),
           'anchorAt', COALESCE(GREATEST(${o}.api_last_seen_at, sg.last_at,
                    (SELECT max(CASE WHEN c.missed_runs = 0 AND s.settings->>'mode' = 'snapshot' THEN GREATEST(c.last_seen_at, s.last_success_at) ELSE c.last_seen_at END)
                       FROM jsonb_array_elements(${o}.keys) k
                       CROSS JOIN LATERAL (SELECT * FROM sources_claim WHERE key_type = k->>'type' AND value = k->>'value' OFFSET 0) c
                       JOIN sources_source s ON s.id = c.source_id
                      WHERE ${o}.claimed_tlp IS NOT NULL AND s.collection = (SELECT name FROM intel_collection WHERE id = ${o}.collection_id))),
                    ${o}.added_at),
           'decay', d.decay, 'override', ${o}.score_override, 'until', ${o}.score_override_until)
    FROM (SELECT sum(ss.count)::float8 AS count, sum(ss.false_positives)::float8 AS false_positives, max(ss.last_at) AS last_at
            FROM jsonb_array_elements(${o}.keys) k
            CROSS JOIN LATERAL (SELECT * FROM sighting_summary WHERE key_type = k->>'type' AND key_value = k->>'value' OFFSET 0) ss) sg,
         (SELECT scoring->'decay'->${o}.type AS decay FROM intel_collection WHERE id = ${o}.collection_id) d)`;
