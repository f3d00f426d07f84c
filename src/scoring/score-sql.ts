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
 * The score inputs of the object row `o` (an alias of intel_object itself), claim by claim, as one jsonb
 * (StoredScoreInputs, src/scoring/score-inputs.ts): read by the SQL function beside intel_object_score.
 */
export const scoreInputsSql = (o: string) => `intel_object_score_inputs(${o})`;
