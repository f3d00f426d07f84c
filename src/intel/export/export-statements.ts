/**
 * The statements of an export's rows (ExportRepository, run as the query of a server-side cursor), built
 * from the export's parameters, with their values, in a module that imports nothing but SQL fragments: the
 * bench (row 16) loads them from the service build, so its raw baseline runs exactly these statements.
 */
import type { KeyType } from '../../common/indicators/indicators.js';
import { namedParameters } from '../../common/sql/named-parameters.js';
import { isoMicros, isoUtc } from '../../common/sql/timestamps.js';
import type { ObjectConditions } from '../../read-policy/read-policy.js';
import { confidenceSql } from '../../scoring/score-sql.js';
import { LIVE } from '../object-statements.js';
import type { ExportParams } from './export-formats.js';

/**
 * Live objects of collection `collectionId` (with `unnest`, each of their keys as `k`), walked along the
 * (collection_id, id) index: no sort, first rows at once. `narrowed`: the read policy's conditions and the exclusion.
 */
const liveObjects = (collectionId: string, unnest: string, narrowed: string) =>
  `FROM intel_object o ${unnest} WHERE o.collection_id = ${collectionId} AND ${LIVE('o')} ${narrowed}`;
const EACH_KEY = 'CROSS JOIN LATERAL jsonb_array_elements(o.keys) k';

/** The value as listed: with `urlScheme=omit` a URL without its `http://` or `https://`. */
const listedValue = (omitScheme: boolean) =>
  omitScheme ? `CASE WHEN k->>'type' = 'URL' THEN regexp_replace(k->>'value', '^https?://', '') ELSE k->>'value' END` : `k->>'value'`;

/** A statement's text and its values. */
export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * The parameters of an export's statements: the collection, then only those its text names (a parameter PostgreSQL
 * cannot type is an error): the key type when one is named, the ids a warninglist keeps out when there are any,
 * the key types an excluding list checks (first pass), then the read policy's.
 */
function parametersOf(keyType: KeyType | null, policy: ObjectConditions, more: ('excluded' | 'keyTypes')[]) {
  return namedParameters(['collectionId', ...(keyType === null ? [] : (['keyType'] as const)), ...more]).with(policy.parameterNames);
}

type Placeholders = ReturnType<typeof parametersOf>['$'];

/** Objects with a key of the export's key type (any key of theirs may put them on a list, so the first pass reads them whole). */
const holdingKeyType = (keyType: KeyType | null, $: Placeholders) =>
  keyType === null ? '' : `AND o.keys @> jsonb_build_array(jsonb_build_object('type', ${$.keyType}::text))`;

/** The objects a warninglist keeps out, by id: `<> ALL` of a bound array is hashed (PostgreSQL 15+). */
const notListed = (excluded: readonly string[], $: Placeholders) => (excluded.length > 0 ? `AND o.id <> ALL(${$.excluded}::bigint[])` : '');

/**
 * The statement of an export. A key belongs to one object of a collection, so the values of one key type are
 * distinct as they are; values of several types, and URLs without their scheme (http and https twins), are made
 * distinct by PostgreSQL (a sort, spilled to disk beyond work_mem, never held by the service).
 */
function exportStatement(collectionId: number, params: ExportParams, policy: ObjectConditions, excluded: readonly string[] = []): Statement {
  const { format, keyType, urlScheme } = params;
  const p = parametersOf(keyType, policy, excluded.length > 0 ? ['excluded'] : []);
  const values = p.values({ collectionId, keyType, excluded, keyTypes: undefined, ...policy.values() });
  const ofType = keyType === null ? '' : `AND k->>'type' = ${p.$.keyType}`;
  const objects = (unnest = '') => liveObjects(p.$.collectionId, unnest, `${policy.conditions('o', p.$)} ${notListed(excluded, p.$)}`);
  const text = (() => {
    switch (format) {
      case 'txt': {
        const omit = urlScheme === 'omit' && (keyType === null || keyType === 'URL');
        if (keyType !== null && !omit) {
          return `SELECT k->>'value' ${objects(EACH_KEY)} ${ofType} ORDER BY o.id`;
        }
        return `SELECT DISTINCT ${listedValue(omit)} COLLATE "C" AS value
                  ${objects(EACH_KEY)} ${ofType}
                 ORDER BY value`;
      }
      case 'csv':
        return `SELECT o.type, k->>'type' AS "keyType", k->>'value' AS value, ${isoUtc('o.expires_at')} AS "expiresAt", o.context, o.tlp
                  ${objects('CROSS JOIN LATERAL jsonb_array_elements(o.keys) WITH ORDINALITY AS e(k, n)')} ${ofType}
                 ORDER BY o.id, e.n`;
      case 'ndjson':
        return `SELECT o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt", o.tlp ${objects()} ORDER BY o.id`;
      case 'stix':
        // The object's life and the time of its last change record (its feed position's time; a record not
        // numbered yet has none, its creation stands in; a pruned history leaves the life's first add), and
        // its indicator's confidence (extensions §18).
        return `SELECT o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt", o.tlp, o.uid, ${isoMicros('o.added_at')} AS "addedAt",
                       ${confidenceSql('o')} AS confidence,
                       COALESCE((SELECT ${isoMicros('COALESCE(ch.seq_at, ch.created_at)')} FROM intel_change ch
                                  WHERE ch.collection_id = o.collection_id AND ch.object_uid = o.uid ORDER BY ch.id DESC LIMIT 1),
                                ${isoMicros('o.added_at')}) AS modified
                  ${objects()} ORDER BY o.id`;
    }
  })();
  return { text, values };
}

/**
 * The keys, of the types an excluding warninglist checks, of the live objects of the collection that the export
 * would hold (its key type and the policy's conditions as in `exportStatement`): the first pass of an export that
 * lists may shorten. It finds the objects to leave out and their number (`X-Excluded-Count`, so the objects the
 * export would not have held anyway are not counted). Any key of an object may list it, so the key type filter is
 * on the object (its `keys` holding one of that type), not on the keys read.
 */
function listableKeysStatement(collectionId: number, keyType: KeyType | null, policy: ObjectConditions, keyTypes: readonly string[]): Statement {
  const p = parametersOf(keyType, policy, ['keyTypes']);
  return {
    text: `SELECT k.object_id::text, k.key_type, k.value FROM intel_object_key k JOIN intel_object o ON o.id = k.object_id
            WHERE k.collection_id = ${p.$.collectionId} AND k.key_type = ANY(${p.$.keyTypes}::text[]) AND ${LIVE('o')} ${holdingKeyType(keyType, p.$)}
                  ${policy.conditions('o', p.$)}`,
    values: p.values({ collectionId, keyType, keyTypes, excluded: undefined, ...policy.values() }),
  };
}

/**
 * The most restrictive marking (a rank, 0 when there is none) among the objects an export holds: `X-TLP-Max`,
 * needed before the body. The objects are those of `exportStatement` (an object holds lines of a key type
 * exactly when it has a key of it), read in the body's snapshot. Only marked objects are looked at, along the
 * partial index of marked objects (IDX_intel_object_marked) from the most restrictive down, so the first one the
 * export holds ends the read: none in an unmarked collection, one in most others, never a scan of the objects.
 * `o.tlp > 0` is written out for the planner to match the index's predicate.
 */
function markingStatement(collectionId: number, keyType: KeyType | null, policy: ObjectConditions, excluded: readonly string[] = []): Statement {
  const p = parametersOf(keyType, policy, excluded.length > 0 ? ['excluded'] : []);
  const narrowed = `AND o.tlp > 0 ${holdingKeyType(keyType, p.$)} ${policy.conditions('o', p.$)} ${notListed(excluded, p.$)}`;
  return {
    text: `SELECT COALESCE((SELECT o.tlp ${liveObjects(p.$.collectionId, '', narrowed)} ORDER BY o.tlp DESC LIMIT 1), 0)::int AS tlp`,
    values: p.values({ collectionId, keyType, excluded, keyTypes: undefined, ...policy.values() }),
  };
}

/**
 * The statements of an export: its rows (`excluded`: the ids a warninglist keeps out), its first pass
 * (`listableKeys`) and the most restrictive marking among its objects (`marking`).
 */
export const EXPORT_STATEMENTS = {
  rows: exportStatement,
  listableKeys: listableKeysStatement,
  marking: markingStatement,
} as const;
