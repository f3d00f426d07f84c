import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scoring and decay (extensions §18, src/scoring): the score is never stored (it moves with time); its inputs
 * are, and two SQL functions compute it from them, so that every filter on it is exact and runs in the
 * statement that reads the objects.
 *
 * - Admiralty values are stored as their numbers (A 100 … E 0, F 50; 1 100 … 5 0, 6 50): sources keep their
 *   `reliability` and `credibility`, a claim the credibility its record carried (NULL: the source's). A key's
 *   `reliability`, and an object's api claim's (the highest among the keys that wrote it; NULL without one), are
 *   ranks (E 0, D 1, F 2, C 3, B 4, A 5: src/scoring/admiralty.ts), so GREATEST keeps the most reliable and C
 *   reads back as C though it counts as F (src/scoring/score-sql.ts turns a rank into its value). The objects the api
 *   claims before this migration take F, as every key made before does.
 * - The override: score, until, reason and key, on the object row (it ends with the object's life).
 * - Collections keep their `scoring` whole, defaults filled in (src/scoring/scoring-config.ts), so a statement
 *   reads one jsonb per collection and never applies defaults itself.
 * - `intel_product`: a product of factors in the order asked (`ORDER BY`), so the TypeScript twin
 *   (src/scoring/score.ts), which multiplies in the same order, rounds the same way.
 * - `intel_score`: the formula itself, pure (property-tested against score.ts), which statements call on the
 *   inputs they read (src/scoring/score-sql.ts); `intel_object_score_inputs`: the same inputs claim by claim,
 *   for what only score.ts tells (an explanation's factors, when a score falls below a bound).
 * - `score_tally`: a version of every score input that can change without a change record (claims, key
 *   reliabilities raised by an identical re-send, overrides, a source's Admiralty values): a counter in a few
 *   shards, added to in the transaction that changes an input (as `sighting_tally` is for sightings), which
 *   the ETags of reads whose body shows or filters by scores carry.
 * - `Decayed`, a reason of Remove records (the expiry job's removal of decayed objects).
 */
export class Scoring1796100000000 implements MigrationInterface {
  name = 'Scoring1796100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE sources_source ADD COLUMN reliability smallint NOT NULL DEFAULT 50, ADD COLUMN credibility smallint NOT NULL DEFAULT 50`,
    );
    await queryRunner.query(`ALTER TABLE sources_claim ADD COLUMN credibility smallint`);
    await queryRunner.query(`ALTER TABLE auth_api_key ADD COLUMN reliability smallint NOT NULL DEFAULT ${RANK_F}`);
    await queryRunner.query(
      `ALTER TABLE intel_object ADD COLUMN api_reliability smallint, ADD COLUMN score_override smallint, ADD COLUMN score_override_until timestamptz,
         ADD COLUMN score_override_reason text, ADD COLUMN score_override_key_id integer`,
    );
    await queryRunner.query(`UPDATE intel_object SET api_reliability = ${RANK_F} WHERE api_first_seen_at IS NOT NULL`);
    await queryRunner.query(`ALTER TABLE intel_collection ADD COLUMN scoring jsonb NOT NULL DEFAULT '${DEFAULT_SCORING}'`);
    await queryRunner.query(`ALTER TABLE intel_change DROP CONSTRAINT intel_change_reason_check`);
    await queryRunner.query(
      `ALTER TABLE intel_change ADD CONSTRAINT intel_change_reason_check CHECK (reason IN ('Deleted', 'Expired', 'Withdrawn', 'Decayed'))`,
    );
    await queryRunner.query(`CREATE TABLE score_tally (shard smallint PRIMARY KEY, total bigint NOT NULL)`);
    await queryRunner.query(`CREATE AGGREGATE intel_product(float8) (SFUNC = float8mul, STYPE = float8, INITCOND = '1')`);
    await queryRunner.query(INTEL_DECAY);
    await queryRunner.query(INTEL_SCORE);
    await queryRunner.query(INTEL_OBJECT_SCORE_INPUTS);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION intel_object_score_inputs(intel_object)`);
    await queryRunner.query(`DROP FUNCTION intel_score(float8, float8, float8, timestamptz, float8, float8, smallint, timestamptz, timestamptz)`);
    await queryRunner.query(`DROP FUNCTION intel_decay(float8, float8)`);
    await queryRunner.query(`DROP AGGREGATE intel_product(float8)`);
    await queryRunner.query(`DROP TABLE score_tally`);
    await queryRunner.query(`UPDATE intel_change SET reason = 'Expired' WHERE reason = 'Decayed'`);
    await queryRunner.query(`ALTER TABLE intel_change DROP CONSTRAINT intel_change_reason_check`);
    await queryRunner.query(`ALTER TABLE intel_change ADD CONSTRAINT intel_change_reason_check CHECK (reason IN ('Deleted', 'Expired', 'Withdrawn'))`);
    await queryRunner.query(`ALTER TABLE intel_collection DROP COLUMN scoring`);
    await queryRunner.query(
      `ALTER TABLE intel_object DROP COLUMN api_reliability, DROP COLUMN score_override, DROP COLUMN score_override_until,
         DROP COLUMN score_override_reason, DROP COLUMN score_override_key_id`,
    );
    await queryRunner.query(`ALTER TABLE auth_api_key DROP COLUMN reliability`);
    await queryRunner.query(`ALTER TABLE sources_claim DROP COLUMN credibility`);
    await queryRunner.query(`ALTER TABLE sources_source DROP COLUMN reliability, DROP COLUMN credibility`);
  }
}

/** F's rank (src/scoring/admiralty.ts: reliabilityRank). */
const RANK_F = 2;
/** When a claim `c` of source `s` was last listed (src/sources/claim-times.ts's lastSeenOf, copied). */
const LAST_SEEN = `CASE WHEN c.missed_runs = 0 AND s.settings->>'mode' = 'snapshot' THEN GREATEST(c.last_seen_at, s.last_success_at) ELSE c.last_seen_at END`;

/** The defaults of extensions §18, as stored (a migration keeps its own copy: src/scoring/scoring-config.ts may move on). */
const DEFAULT_SCORING = JSON.stringify({
  decay: {
    File: { lifetimeDays: 460, speed: 0.5 },
    DomainName: { lifetimeDays: 300, speed: 1 },
    URL: { lifetimeDays: 90, speed: 2 },
    IPAddress: { lifetimeDays: 60, speed: 2 },
    IPNetwork: { lifetimeDays: 180, speed: 1 },
  },
  threshold: 0,
  decayedAction: 'keep',
  taxiiViews: [],
});

/**
 * The decay factor at `r` = days since the anchor / lifetime (> 0): 1 − r^(1/speed), 0 from the lifetime on.
 * PostgreSQL refuses a power that underflows or overflows where IEEE arithmetic gives 0 or ∞, so those
 * ends are spelled out: r^(1/speed) below e^-740 leaves 1 − it = 1 exactly in float8. r is 0 within the
 * anchor's first millisecond (days are counted in whole milliseconds from an anchor stored in microseconds).
 */
const INTEL_DECAY = `
CREATE FUNCTION intel_decay(r float8, speed float8) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN r >= 1 THEN 0 WHEN r <= 0 OR ln(r) / speed < -740 THEN 1 ELSE 1 - power(r, 1 / speed) END
$$`;

/**
 * The score (extensions §18) of an object whose live claims leave `miss` = Π(1 − strength/100), with `sighted`
 * sightings and `false_positives`, anchored at `anchor`, decaying over `lifetime` days at `speed` (NULL: never),
 * at time `at`; an override holds while `at` is before its `until` (NULL: for good). Rounded half up. Days are
 * counted from milliseconds, as a client's timestamps carry them.
 */
const INTEL_SCORE = `
CREATE FUNCTION intel_score(miss float8, sighted float8, false_positives float8, anchor timestamptz, lifetime float8, speed float8,
                            override smallint, override_until timestamptz, at timestamptz)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN override IS NOT NULL AND (override_until IS NULL OR at < override_until) THEN override::integer
    ELSE floor(100 * (1 - miss) * ((sighted + 1) / (sighted + false_positives + 1))
               * CASE WHEN lifetime IS NULL OR at <= anchor THEN 1
                      ELSE intel_decay((floor(extract(epoch FROM at - anchor) * 1000)::float8 / 1000 / 86400) / lifetime, speed) END
               + 0.5)::integer
  END
$$`;

/** A time as views show it: UTC, milliseconds (src/common/sql/timestamps.ts's isoUtc, copied: a migration keeps its SQL). */
const ISO = (t: string) => `to_char(${t} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The same inputs as src/scoring/score-sql.ts's scoreSql reads, claim by claim, as one jsonb (each source's claims with the
 * letter and digit its form gives, for the explanation: C and F, 3 and 6 count alike; a digit only while no
 * record of the source gives its own credibility): for what only the TypeScript twin
 * tells (an explanation's factors, the moment a score falls below a bound: src/scoring/score-inputs.ts). Kept
 * beside the number scoreSql computes for the filters; test/scoring checks the twin's score from these inputs
 * against it. `anchorMs` is the anchor in whole milliseconds rounded up: intel_score counts
 * whole milliseconds down from the anchor's microseconds, which from a time of whole milliseconds is at − ceil.
 */
const INTEL_OBJECT_SCORE_INPUTS = `
CREATE FUNCTION intel_object_score_inputs(o intel_object)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH col AS (SELECT name, scoring FROM intel_collection WHERE id = o.collection_id),
  claims AS (
    SELECT s.name, s.reliability, max(COALESCE(c.credibility, s.credibility)) AS credibility, s.settings->>'reliability' AS reliability_code,
           CASE WHEN bool_and(c.credibility IS NULL) THEN (s.settings->>'credibility')::int END AS credibility_code,
           max(${LAST_SEEN}) AS seen
      FROM sources_source s
      CROSS JOIN jsonb_array_elements(o.keys) k
      JOIN sources_claim c ON c.source_id = s.id AND c.key_type = k->>'type' AND c.value = k->>'value'
     WHERE s.collection = (SELECT name FROM col)
     GROUP BY s.id),
  sighted AS (
    SELECT sum(ss.count)::float8 AS count, sum(ss.false_positives)::float8 AS false_positives, max(ss.last_at) AS last_at
      FROM jsonb_array_elements(o.keys) k
      CROSS JOIN LATERAL (SELECT * FROM sighting_summary WHERE key_type = k->>'type' AND key_value = k->>'value' OFFSET 0) ss),
  anchored AS (
    SELECT GREATEST(o.api_last_seen_at, (SELECT max(seen) FROM claims)) AS claimed, sg.last_at AS sighted,
           COALESCE(GREATEST(o.api_last_seen_at, sg.last_at, (SELECT max(seen) FROM claims)), o.added_at) AS anchor
      FROM sighted sg)
  SELECT jsonb_build_object(
           'apiReliability', o.api_reliability, 'apiLastSeenAt', ${ISO('o.api_last_seen_at')},
           'sources', COALESCE((SELECT jsonb_agg(jsonb_build_object('source', name, 'reliability', reliability, 'credibility', credibility,
                                                                    'reliabilityCode', reliability_code, 'credibilityCode', credibility_code,
                                                                    'lastSeenAt', ${ISO('seen')}) ORDER BY name) FROM claims), '[]'::jsonb),
           'count', COALESCE(sg.count, 0), 'falsePositives', COALESCE(sg.false_positives, 0),
           'anchorAt', ${ISO('a.anchor')}, 'anchorMs', ceil(extract(epoch FROM a.anchor) * 1000)::float8,
           'anchor', CASE WHEN a.sighted > COALESCE(a.claimed, '-infinity') THEN 'sighting' ELSE 'claim' END,
           'decay', col.scoring->'decay'->o.type, 'threshold', (col.scoring->>'threshold')::float8,
           'override', o.score_override, 'overrideUntil', ${ISO('o.score_override_until')},
           'overrideReason', o.score_override_reason, 'overrideKeyID', o.score_override_key_id)
    FROM sighted sg, anchored a, col
$$`;
