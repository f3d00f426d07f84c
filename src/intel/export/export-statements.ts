/**
 * The statements of an export's rows (ExportRepository, run as the query of a server-side cursor), built
 * from the export's parameters, with their values, in a module that imports nothing but SQL fragments: the
 * bench (row 16) loads them from the service build, so its raw baseline runs exactly these statements.
 */
import { isoMicros, isoUtc } from '../../common/sql/timestamps.js';
import { LIVE } from '../object-statements.js';
import { sightingConditions } from '../../sightings/sighting-sql.js';
import type { ExportParams } from './export-formats.js';

/**
 * Live objects of collection $1 (with `unnest`, each of their keys as `k`), walked along the
 * (collection_id, id) index: no sort, first rows at once. `sighted`: the sighting filter's conditions.
 */
const liveObjects = (unnest: string, sighted: string) => `FROM intel_object o ${unnest} WHERE o.collection_id = $1 AND ${LIVE('o')} ${sighted}`;
const EACH_KEY = 'CROSS JOIN LATERAL jsonb_array_elements(o.keys) k';

/** The value as listed: with `urlScheme=omit` a URL without its `http://` or `https://`. */
const listedValue = (omitScheme: boolean) =>
  omitScheme ? `CASE WHEN k->>'type' = 'URL' THEN regexp_replace(k->>'value', '^https?://', '') ELSE k->>'value' END` : `k->>'value'`;

/**
 * The placeholders of an export's values after $1 (the collection id), in the order `parameters` gives
 * them: the key type when one is named, `sightedSince` when given, the ids of the objects a warninglist
 * keeps out when there are any.
 */
function placeholders({ keyType, sightings }: Pick<ExportParams, 'keyType' | 'sightings'>, before = 1) {
  let next = before;
  const take = (present: boolean) => (present ? `$${++next}` : '');
  return { keyType: take(keyType !== null), sightedSince: take(sightings.sightedSince !== null), excluded: take(true) };
}

/**
 * The statement of an export (values as `placeholders` says). A key belongs to one object of
 * a collection, so the values of one key type are distinct as they are; values of several types, and
 * URLs without their scheme (http and https twins), are made distinct by PostgreSQL (a sort, spilled to
 * disk beyond work_mem, never held by the service).
 */
function exportSql(params: ExportParams, excludes = false): string {
  const { format, keyType, urlScheme, sightings } = params;
  const at = placeholders(params);
  const ofType = keyType === null ? '' : `AND k->>'type' = ${at.keyType}`;
  // The objects a warninglist keeps out, by id: `<> ALL` of a bound array is hashed (PostgreSQL 15+).
  const notListed = excludes ? `AND o.id <> ALL(${at.excluded}::bigint[])` : '';
  const sighted = `${sightingConditions('o', sightings, at.sightedSince)} ${notListed}`;
  const objects = (unnest = '') => liveObjects(unnest, sighted);
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
      return `SELECT o.type, k->>'type' AS "keyType", k->>'value' AS value, ${isoUtc('o.expires_at')} AS "expiresAt", o.context
                ${objects('CROSS JOIN LATERAL jsonb_array_elements(o.keys) WITH ORDINALITY AS e(k, n)')} ${ofType}
               ORDER BY o.id, e.n`;
    case 'ndjson':
      return `SELECT o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt" ${objects()} ORDER BY o.id`;
    case 'stix':
      // The object's life and the time of its last change record (its feed position's time; a record not
      // numbered yet has none, its creation stands in; a pruned history leaves the life's first add).
      return `SELECT o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt", o.uid, ${isoMicros('o.added_at')} AS "addedAt",
                     COALESCE((SELECT ${isoMicros('COALESCE(ch.seq_at, ch.created_at)')} FROM intel_change ch
                                WHERE ch.collection_id = o.collection_id AND ch.object_uid = o.uid ORDER BY ch.id DESC LIMIT 1),
                              ${isoMicros('o.added_at')}) AS modified
                ${objects()} ORDER BY o.id`;
  }
}

/**
 * The keys, of types $2 (those some excluding warninglist checks), of the live objects of collection $1 that
 * the export would hold (its key type and sighting filters as in `exportSql`, values after $2): the first pass
 * of an export that lists may shorten. It finds the objects to leave out and their number (`X-Excluded-Count`,
 * so the objects the export would not have held anyway are not counted). Any key of an object may list it, so
 * the key type filter is on the object (its `keys` holding one of that type), not on the keys read.
 */
function listableKeysSql(params: Pick<ExportParams, 'keyType' | 'sightings'>): string {
  const at = placeholders(params, 2);
  const ofType = params.keyType === null ? '' : `AND o.keys @> jsonb_build_array(jsonb_build_object('type', ${at.keyType}::text))`;
  return `SELECT k.object_id::text, k.key_type, k.value FROM intel_object_key k JOIN intel_object o ON o.id = k.object_id
           WHERE k.collection_id = $1 AND k.key_type = ANY($2::text[]) AND ${LIVE('o')} ${ofType}
                 ${sightingConditions('o', params.sightings, at.sightedSince)}`;
}

/** The filters' values, in the order of `placeholders`. */
const filterValues = ({ keyType, sightings }: Pick<ExportParams, 'keyType' | 'sightings'>): unknown[] => [
  ...(keyType === null ? [] : [keyType]),
  ...(sightings.sightedSince === null ? [] : [sightings.sightedSince]),
];

/**
 * The rows' statement of an export and its values (see `placeholders`; `excluded`: the ids a warninglist keeps
 * out), and the statement of its first pass (`listableKeys`, `keyTypes`: the types an excluding list checks).
 */
export const EXPORT_STATEMENTS = {
  rows: exportSql,
  parameters: (collectionId: number, params: Pick<ExportParams, 'keyType' | 'sightings'>, excluded: readonly string[] = []): unknown[] => [
    collectionId,
    ...filterValues(params),
    ...(excluded.length === 0 ? [] : [excluded]),
  ],
  listableKeys: listableKeysSql,
  listableParameters: (collectionId: number, params: Pick<ExportParams, 'keyType' | 'sightings'>, keyTypes: readonly string[]): unknown[] => [
    collectionId,
    keyTypes,
    ...filterValues(params),
  ],
} as const;
