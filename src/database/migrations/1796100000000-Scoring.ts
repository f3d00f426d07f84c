import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scoring and decay (extensions §18, src/scoring): the score is never stored (it moves with time); its inputs
 * are, and two SQL functions compute it from them, so that every filter on it is exact and runs in the
 * statement that reads the objects.
 *
 * - Admiralty values are stored as their numbers (A 100 … E 0, F 50; 1 100 … 5 0, 6 50): sources keep their
 *   `reliability` and `credibility`, a claim the credibility its record carried (NULL: the source's), a key its
 *   `reliability`, an object the highest reliability among the keys that wrote its api claim (NULL without one;
 *   the objects the api claims before this migration take F, as every key made before does).
 * - The override: score, until, reason and key, on the object row (it ends with the object's life).
 * - Collections keep their `scoring` whole, defaults filled in (src/scoring/scoring-config.ts), so a statement
 *   reads one jsonb per collection and never applies defaults itself.
 * - `intel_product`: a product of factors in the order asked (`ORDER BY`), so the TypeScript twin
 *   (src/scoring/score.ts), which multiplies in the same order, rounds the same way.
 * - `intel_score`: the formula itself, pure (property-tested against score.ts); `intel_object_score`: its
 *   inputs read for one object row (claims, sightings summary, collection's decay) at a time.
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
    await queryRunner.query(`ALTER TABLE auth_api_key ADD COLUMN reliability smallint NOT NULL DEFAULT 50`);
    await queryRunner.query(
      `ALTER TABLE intel_object ADD COLUMN api_reliability smallint, ADD COLUMN score_override smallint, ADD COLUMN score_override_until timestamptz,
         ADD COLUMN score_override_reason text, ADD COLUMN score_override_key_id integer`,
    );
    await queryRunner.query(`UPDATE intel_object SET api_reliability = 50 WHERE api_first_seen_at IS NOT NULL`);
    await queryRunner.query(`ALTER TABLE intel_collection ADD COLUMN scoring jsonb NOT NULL DEFAULT '${DEFAULT_SCORING}'`);
    await queryRunner.query(`ALTER TABLE intel_change DROP CONSTRAINT intel_change_reason_check`);
    await queryRunner.query(
      `ALTER TABLE intel_change ADD CONSTRAINT intel_change_reason_check CHECK (reason IN ('Deleted', 'Expired', 'Withdrawn', 'Decayed'))`,
    );
    await queryRunner.query(`CREATE TABLE score_tally (shard smallint PRIMARY KEY, total bigint NOT NULL)`);
    await queryRunner.query(`CREATE AGGREGATE intel_product(float8) (SFUNC = float8mul, STYPE = float8, INITCOND = '1')`);
    await queryRunner.query(INTEL_DECAY);
    await queryRunner.query(INTEL_SCORE);
    await queryRunner.query(INTEL_OBJECT_SCORE);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION intel_object_score(intel_object, timestamptz)`);
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
 * ends are spelled out: r^(1/speed) below e^-740 leaves 1 − it = 1 exactly in float8.
 */
const INTEL_DECAY = `
CREATE FUNCTION intel_decay(r float8, speed float8) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN r >= 1 THEN 0 WHEN ln(r) / speed < -740 THEN 1 ELSE 1 - power(r, 1 / speed) END
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

/**
 * The inputs of one object row's score, read where they live: its api claim (its columns), its sources' claims
 * in its collection (one per source: the highest credibility among its keys' claims, the latest time seen),
 * the sightings summary of its keys, and its collection's decay for its type. The claims are probed only when
 * the object has a source claim (`claimed_tlp` is set exactly then); each key by primary key or index (OFFSET 0
 * keeps the lateral per key, as src/sightings/sighting-sql.ts explains). Kept equal to
 * src/scoring/score-sql.ts's inputs, which the explanation reads per claim.
 */
export const INTEL_OBJECT_SCORE = `
CREATE FUNCTION intel_object_score(o intel_object, at timestamptz)
RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT intel_score(
           COALESCE((SELECT intel_product(x.f ORDER BY x.f) FROM (
              SELECT (200 - o.api_reliability - 50)::float8 / 200 AS f WHERE o.api_reliability IS NOT NULL
              UNION ALL
              SELECT (200 - max(s.reliability + COALESCE(c.credibility, s.credibility)))::float8 / 200
                FROM jsonb_array_elements(o.keys) k
                CROSS JOIN LATERAL (SELECT * FROM sources_claim WHERE key_type = k->>'type' AND value = k->>'value' OFFSET 0) c
                JOIN sources_source s ON s.id = c.source_id
               WHERE o.claimed_tlp IS NOT NULL AND s.collection = (SELECT name FROM intel_collection WHERE id = o.collection_id)
               GROUP BY s.id) x), 1),
           COALESCE(sg.count, 0), COALESCE(sg.false_positives, 0),
           COALESCE(GREATEST(o.api_last_seen_at, sg.last_at,
                    (SELECT max(CASE WHEN c.missed_runs = 0 AND s.settings->>'mode' = 'snapshot' THEN GREATEST(c.last_seen_at, s.last_success_at) ELSE c.last_seen_at END)
                       FROM jsonb_array_elements(o.keys) k
                       CROSS JOIN LATERAL (SELECT * FROM sources_claim WHERE key_type = k->>'type' AND value = k->>'value' OFFSET 0) c
                       JOIN sources_source s ON s.id = c.source_id
                      WHERE o.claimed_tlp IS NOT NULL AND s.collection = (SELECT name FROM intel_collection WHERE id = o.collection_id))),
                    o.added_at),
           (d.decay->>'lifetimeDays')::float8, (d.decay->>'speed')::float8,
           o.score_override, o.score_override_until, at)
    FROM (SELECT sum(ss.count)::float8 AS count, sum(ss.false_positives)::float8 AS false_positives, max(ss.last_at) AS last_at
            FROM jsonb_array_elements(o.keys) k
            CROSS JOIN LATERAL (SELECT * FROM sighting_summary WHERE key_type = k->>'type' AND key_value = k->>'value' OFFSET 0) ss) sg,
         (SELECT scoring->'decay'->o.type AS decay FROM intel_collection WHERE id = o.collection_id) d
$$`;
