import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import { LIVE } from '../intel/object-statements.js';
import type { PolicyParameter, ReadPolicy } from '../read-policy/read-policy.js';
import type { StoredScoreInputs } from './score-inputs.js';
import { BUMP_SCORE_VERSION, scoreInputsSql, scoreSql } from './score-sql.js';

/** Every input of one object's score (intel_object_score_inputs), with the SQL's score at the moment asked. */
export type ScoreInputsRow = StoredScoreInputs & { score: number };

const KEY_PARAMETERS = namedParameters(['collectionId', 'keyType', 'keyValue']);
const K = KEY_PARAMETERS.$;
const INPUTS_PARAMETERS = KEY_PARAMETERS.with(['at']);

type PolicyPlaceholders = Partial<Record<PolicyParameter, string>>;

/** The live object of collection $collectionId holding the key (alias `o`, its key row `k`), under the policy's conditions. */
const objectOfKey = (policy: ReadPolicy, $: PolicyPlaceholders) =>
  `k.collection_id = ${K.collectionId} AND k.key_type = ${K.keyType} AND k.value = ${K.keyValue} AND ${LIVE('o')}${policy.conditions('o', $)}`;

/** The score of the object at $at and its inputs claim by claim (scoreInputsSql), read in one statement. */
const INPUTS = (policy: ReadPolicy, $: PolicyPlaceholders) => `SELECT ${scoreSql('o', INPUTS_PARAMETERS.$.at)} AS score, ${scoreInputsSql('o')} AS inputs
    FROM intel_object_key k
    JOIN intel_object o ON o.id = k.object_id
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
    const rows: { score: number; inputs: StoredScoreInputs }[] = await manager.query(
      INPUTS(policy, p.$),
      p.values({ collectionId, keyType: key.type, keyValue: key.value, at: at.toISOString(), ...policy.values() }),
    );
    return rows[0] && { ...rows[0].inputs, score: rows[0].score };
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
}
