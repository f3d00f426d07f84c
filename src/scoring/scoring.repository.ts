import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoUtc } from '../common/sql/timestamps.js';
import { LIVE } from '../intel/object-statements.js';
import type { PolicyParameter, ReadPolicy } from '../read-policy/read-policy.js';
import { lastSeenOf } from '../sources/source-claims.repository.js';
import { BUMP_SCORE_VERSION, scoreSql } from './score-sql.js';
import type { Decay } from './score.js';

/** A source's claims on the object's keys, as the score counts them: once, at their strongest and latest. */
export interface SourceClaimRow {
  source: string;
  reliability: number;
  credibility: number;
  lastSeenAt: string;
}

/** Every input of one object's score, read in the statement that computes the score itself (the SQL's). */
export interface ScoreInputsRow {
  /** intel_object_score at the moment asked. */
  score: number;
  /** The api claim's reliability (its credibility is 6); null without an api claim. */
  apiReliability: number | null;
  apiLastSeenAt: string | null;
  sources: SourceClaimRow[];
  count: number;
  falsePositives: number;
  /** The anchor as views show times (milliseconds, cut). */
  anchorAt: string;
  /**
   * The anchor in epoch milliseconds, rounded up: the SQL counts whole milliseconds from the anchor's
   * microseconds down (floor(at − anchor)), which for a time of whole milliseconds is at − ceil(anchor).
   */
  anchorMs: number;
  anchor: 'claim' | 'sighting';
  decay: Decay | null;
  threshold: number;
  override: number | null;
  overrideUntil: string | null;
  overrideReason: string | null;
  overrideKeyID: number | null;
}

const KEY_PARAMETERS = namedParameters(['collectionId', 'keyType', 'keyValue']);
const K = KEY_PARAMETERS.$;
const INPUTS_PARAMETERS = KEY_PARAMETERS.with(['at']);

type PolicyPlaceholders = Partial<Record<PolicyParameter, string>>;

/** The live object of collection $collectionId holding the key (alias `o`, its key row `k`), under the policy's conditions. */
const objectOfKey = (policy: ReadPolicy, $: PolicyPlaceholders) =>
  `k.collection_id = ${K.collectionId} AND k.key_type = ${K.keyType} AND k.value = ${K.keyValue} AND ${LIVE('o')}${policy.conditions('o', $)}`;

/**
 * The inputs of intel_object_score (migration Scoring) for the object, read the same way, claim by claim, with
 * the score itself beside them: the api claim's columns, each source of the collection claiming any of its
 * keys once (the highest reliability + credibility among its claims, the latest lastSeenOf), the sightings
 * summary of its keys, the anchor (the latest of those times, the object's first add when none), and its
 * collection's decay for its type, threshold and the stored override.
 */
const INPUTS = (policy: ReadPolicy, $: PolicyPlaceholders) => `SELECT ${scoreSql('o', INPUTS_PARAMETERS.$.at)} AS score,
         o.api_reliability AS "apiReliability", ${isoUtc('o.api_last_seen_at')} AS "apiLastSeenAt", src.claims AS sources,
         COALESCE(sg.count, 0) AS count, COALESCE(sg.false_positives, 0) AS "falsePositives",
         ${isoUtc('a.anchor')} AS "anchorAt", ceil(extract(epoch FROM a.anchor) * 1000)::float8 AS "anchorMs",
         CASE WHEN sg.last_at > COALESCE(GREATEST(o.api_last_seen_at, src.last_seen), '-infinity') THEN 'sighting' ELSE 'claim' END AS anchor,
         col.scoring->'decay'->o.type AS decay, (col.scoring->>'threshold')::float8 AS threshold,
         o.score_override AS override, ${isoUtc('o.score_override_until')} AS "overrideUntil",
         o.score_override_reason AS "overrideReason", o.score_override_key_id AS "overrideKeyID"
    FROM intel_object_key k
    JOIN intel_object o ON o.id = k.object_id
    JOIN intel_collection col ON col.id = o.collection_id
   CROSS JOIN LATERAL (
     SELECT COALESCE(jsonb_agg(jsonb_build_object('source', x.name, 'reliability', x.reliability, 'credibility', x.credibility,
                                                  'lastSeenAt', ${isoUtc('x.last_seen')}) ORDER BY x.name), '[]'::jsonb) AS claims,
            max(x.last_seen) AS last_seen
       FROM (SELECT s.name, s.reliability, max(COALESCE(c.credibility, s.credibility)) AS credibility, max(${lastSeenOf('c', 's')}) AS last_seen
               FROM sources_source s
              CROSS JOIN jsonb_array_elements(o.keys) ck
               JOIN sources_claim c ON c.source_id = s.id AND c.key_type = ck->>'type' AND c.value = ck->>'value'
              WHERE s.collection = col.name
              GROUP BY s.id) x) src
   CROSS JOIN LATERAL (
     SELECT sum(ss.count)::float8 AS count, sum(ss.false_positives)::float8 AS false_positives, max(ss.last_at) AS last_at
       FROM jsonb_array_elements(o.keys) sk
      CROSS JOIN LATERAL (SELECT * FROM sighting_summary WHERE key_type = sk->>'type' AND key_value = sk->>'value' OFFSET 0) ss) sg
   CROSS JOIN LATERAL (SELECT COALESCE(GREATEST(o.api_last_seen_at, sg.last_at, src.last_seen), o.added_at) AS anchor) a
   WHERE ${objectOfKey(policy, $)}`;

const OVERRIDE_PARAMETERS = KEY_PARAMETERS.with(['score', 'until', 'reason', 'keyId']);
const V = OVERRIDE_PARAMETERS.$;

/** Sets (or, all NULL, clears) the override of the object; a row when it is there. Not a change record. */
const SET_OVERRIDE = (policy: ReadPolicy, $: PolicyPlaceholders) => `UPDATE intel_object o
     SET score_override = ${V.score}::smallint, score_override_until = ${V.until}::timestamptz,
         score_override_reason = ${V.reason}::text, score_override_key_id = ${V.keyId}::int
    FROM intel_object_key k
   WHERE o.id = k.object_id AND ${objectOfKey(policy, $)}
`;

const SCORES_PARAMETERS = namedParameters(['collections', 'types', 'values', 'at']);
const S = SCORES_PARAMETERS.$;

/** The scores of the live objects holding each (collection, key) pair, by the pair's position (1-based). */
const SCORES = (policy: ReadPolicy, $: PolicyPlaceholders) => `SELECT x.n::int AS n, ${scoreSql('o', S.at)} AS score
    FROM unnest(${S.collections}::text[], ${S.types}::text[], ${S.values}::text[]) WITH ORDINALITY AS x(collection, key_type, value, n)
    JOIN intel_collection col ON col.name = x.collection
    JOIN intel_object_key k ON k.collection_id = col.id AND k.key_type = x.key_type AND k.value = x.value
    JOIN intel_object o ON o.id = k.object_id
   WHERE ${LIVE('o')}${policy.conditions('o', $)}`;

export interface OverrideValues {
  score: number | null;
  until: string | null;
  reason: string | null;
  keyId: number | null;
}

/** The SQL of scores' explanations and overrides (extensions §18). */
@Injectable()
export class ScoringRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The inputs and score at `at` of the live object holding the key, when the policy lets the request see it. */
  async inputs(
    policy: ReadPolicy,
    collectionId: number,
    key: ObjectKey,
    at: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ScoreInputsRow | undefined> {
    const p = INPUTS_PARAMETERS.with(policy.parameterNames);
    const rows: ScoreInputsRow[] = await manager.query(
      INPUTS(policy, p.$),
      p.values({ collectionId, keyType: key.type, keyValue: key.value, at: at.toISOString(), ...policy.values() }),
    );
    return rows[0];
  }

  /**
   * Sets the override of the live object holding the key (all NULL: clears it) and bumps the version of the
   * score inputs, then `then` runs in the same transaction (the row stays locked until it commits, so the
   * explanation it reads shows this override, also when another request sets one at once). Undefined when no
   * object the policy lets the request see holds the key (nothing written).
   */
  async setOverride<T>(
    policy: ReadPolicy,
    collectionId: number,
    key: ObjectKey,
    values: OverrideValues,
    then: (manager: EntityManager) => Promise<T>,
  ): Promise<T | undefined> {
    return this.dataSource.transaction(async (manager) => {
      const p = OVERRIDE_PARAMETERS.with(policy.parameterNames);
      // An UPDATE answers [rows, count] through TypeORM.
      const [, updated]: [unknown[], number] = await manager.query(
        SET_OVERRIDE(policy, p.$),
        p.values({ collectionId, keyType: key.type, keyValue: key.value, ...values, ...policy.values() }),
      );
      if (updated === 0) return undefined;
      await manager.query(BUMP_SCORE_VERSION);
      return then(manager);
    });
  }

  /** The score at `at` of the live object holding each pair (undefined where none the policy lets the request see). */
  async scores(policy: ReadPolicy, pairs: readonly { collection: string; key: ObjectKey }[], at: Date): Promise<(number | undefined)[]> {
    if (pairs.length === 0) return [];
    const p = SCORES_PARAMETERS.with(policy.parameterNames);
    const rows: { n: number; score: number }[] = await this.dataSource.query(
      SCORES(policy, p.$),
      p.values({
        collections: pairs.map((pair) => pair.collection),
        types: pairs.map((pair) => pair.key.type),
        values: pairs.map((pair) => pair.key.value),
        at: at.toISOString(),
        ...policy.values(),
      }),
    );
    const scores: (number | undefined)[] = pairs.map(() => undefined);
    for (const row of rows) scores[row.n - 1] = row.score;
    return scores;
  }
}
