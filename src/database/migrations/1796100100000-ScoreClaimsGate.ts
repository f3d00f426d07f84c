import { MigrationInterface, QueryRunner } from 'typeorm';
import { INTEL_OBJECT_SCORE } from './1796100000000-Scoring.js';

/**
 * `intel_object_score` probes the sources' claims only for an object that has one (`claimed_tlp` is set exactly
 * then), as it meant to: the first version's `WHERE o.claimed_tlp IS NOT NULL` did not keep the planner from
 * probing sources_claim and intel_collection for every row (9 of its 13 buffers a row in a listing page); a CASE
 * does (its subplans run only when taken). Same inputs, same order of multiplication, same scores.
 */
export class ScoreClaimsGate1796100100000 implements MigrationInterface {
  name = 'ScoreClaimsGate1796100100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(GATED_INTEL_OBJECT_SCORE);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(INTEL_OBJECT_SCORE.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'));
  }
}

const GATED_INTEL_OBJECT_SCORE = `
CREATE OR REPLACE FUNCTION intel_object_score(o intel_object, at timestamptz)
RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT intel_score(
           COALESCE((SELECT intel_product(x.f ORDER BY x.f) FROM (
              SELECT (200 - o.api_reliability - 50)::float8 / 200 AS f WHERE o.api_reliability IS NOT NULL
              UNION ALL
              SELECT unnest(CASE WHEN o.claimed_tlp IS NOT NULL THEN ARRAY(
                SELECT (200 - max(s.reliability + COALESCE(c.credibility, s.credibility)))::float8 / 200
                  FROM jsonb_array_elements(o.keys) k
                  CROSS JOIN LATERAL (SELECT * FROM sources_claim WHERE key_type = k->>'type' AND value = k->>'value' OFFSET 0) c
                  JOIN sources_source s ON s.id = c.source_id
                 WHERE s.collection = (SELECT name FROM intel_collection WHERE id = o.collection_id)
                 GROUP BY s.id) END)) x), 1),
           COALESCE(sg.count, 0), COALESCE(sg.false_positives, 0),
           COALESCE(GREATEST(o.api_last_seen_at, sg.last_at,
                    CASE WHEN o.claimed_tlp IS NOT NULL THEN (
                      SELECT max(CASE WHEN c.missed_runs = 0 AND s.settings->>'mode' = 'snapshot' THEN GREATEST(c.last_seen_at, s.last_success_at) ELSE c.last_seen_at END)
                        FROM jsonb_array_elements(o.keys) k
                        CROSS JOIN LATERAL (SELECT * FROM sources_claim WHERE key_type = k->>'type' AND value = k->>'value' OFFSET 0) c
                        JOIN sources_source s ON s.id = c.source_id
                       WHERE s.collection = (SELECT name FROM intel_collection WHERE id = o.collection_id)) END),
                    o.added_at),
           (d.decay->>'lifetimeDays')::float8, (d.decay->>'speed')::float8,
           o.score_override, o.score_override_until, at)
    FROM (SELECT sum(ss.count)::float8 AS count, sum(ss.false_positives)::float8 AS false_positives, max(ss.last_at) AS last_at
            FROM jsonb_array_elements(o.keys) k
            CROSS JOIN LATERAL (SELECT * FROM sighting_summary WHERE key_type = k->>'type' AND key_value = k->>'value' OFFSET 0) ss) sg,
         (SELECT scoring->'decay'->o.type AS decay FROM intel_collection WHERE id = o.collection_id) d
$$`;
