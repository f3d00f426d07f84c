/**
 * The lookup's statement (LookupService), as text with its parameters, in a module that imports nothing but
 * SQL fragments and the named-parameters helper: the bench (row 11) loads it from the service build, so its
 * raw `pg` baseline runs exactly this statement.
 */
import { namedParameters } from '../../common/sql/named-parameters.js';
import { isoUtc } from '../../common/sql/timestamps.js';
import type { ObjectConditions } from '../../read-policy/read-policy.js';
import { scoreSql } from '../../scoring/score-sql.js';
import { sightingSummarySql } from '../../sightings/sighting-sql.js';
import { LIVE } from '../object-statements.js';

/**
 * Every distinct key ($1 types, $2 values) in every collection the caller may read ($3 all, or $4 resource
 * ids) and, when given, named in $5: one statement. The key table's primary key leads with the key
 * (migration KeyFirstObjectKeyIndex), so each key costs one index probe that yields its entries in all
 * collections; only the objects of readable collections are then read.
 *
 * Bounded in bytes like a page ($6 = PAGE_MAX_BYTES): `found` adds up the stored sizes of the matches
 * (row_bytes, an inline column: no large value is read for it), and only the keys whose matches start
 * within the cap, in request order, get their objects read (`within`); the first key always does. The
 * large values of the others are never fetched (TOAST is read only for the rows joined), so the process
 * holds at most the cap plus one key's matches. Each object read gets its sighting summary (null for the
 * others: their keys are NULL), and its score at $7 (extensions §18: the request's `scoreAt`, else its time; null
 * for the others). `narrowed`: the read policy's conditions on each object (the ceiling of a key that may not read
 * every marking), so a key finds exactly what it may see and the byte cap counts only that.
 */
const LOOKUP = (narrowed = '') => `
  WITH found AS (
    SELECT q.i, c.name AS collection, o.id, o.row_bytes
      FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(type, value, i)
      JOIN intel_object_key k ON k.key_type = q.type AND k.value = q.value
      JOIN intel_collection c ON c.id = k.collection_id
      JOIN intel_object o ON o.id = k.object_id AND ${LIVE('o')}${narrowed}
     WHERE ($3 OR c.resource_id = ANY($4::int[])) AND ($5::text[] IS NULL OR c.name = ANY($5::text[]))
  ), answered AS (
    SELECT i, sum(sum(row_bytes)) OVER (ORDER BY i) - sum(row_bytes) < $6 AS within FROM found GROUP BY i
  )
  SELECT f.i, f.collection, a.within, o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt", o.tlp,
         ${sightingSummarySql('o.keys')} AS sightings, CASE WHEN o.id IS NOT NULL THEN ${scoreSql('o', '$7')} END AS score
    FROM found f
    JOIN answered a USING (i)
    LEFT JOIN intel_object o ON a.within AND o.id = f.id
   ORDER BY f.i, f.collection`;

/**
 * Which of the keys (`types`, `values`) a live object holds in a collection the caller may read (`readsAll`, or
 * `readable` resource ids): the positions (from 1) of those held. One index probe per key, as LOOKUP's.
 */
const HELD_PARAMETERS = namedParameters(['types', 'values', 'readsAll', 'readable']);
const H = HELD_PARAMETERS.$;
const HELD = (narrowed: string) => `
  SELECT q.i FROM unnest(${H.types}::text[], ${H.values}::text[]) WITH ORDINALITY AS q(type, value, i)
   WHERE EXISTS (SELECT FROM intel_object_key k
                   JOIN intel_collection c ON c.id = k.collection_id
                   JOIN intel_object o ON o.id = k.object_id AND ${LIVE('o')}${narrowed}
                  WHERE k.key_type = q.type AND k.value = q.value AND (${H.readsAll} OR c.resource_id = ANY(${H.readable}::int[])))`;

/** The held keys' statement under a read policy (its conditions on each object; parameters after the four above). */
export function heldStatement(policy: ObjectConditions) {
  const parameters = HELD_PARAMETERS.with(policy.parameterNames);
  return { text: HELD(policy.conditions('o', parameters.$)), parameters };
}

/** The statement of a read nothing narrows and its parameters by name ($1 to $7 above, in that order). */
export const LOOKUP_STATEMENT = {
  text: LOOKUP(),
  parameters: namedParameters(['types', 'values', 'readsAll', 'readable', 'collections', 'maxBytes', 'scoreAt']),
} as const;

/** The lookup under a read policy: the statement above when it narrows nothing, its parameters after $7 (its `scoreAt` is the lookup's own). */
export function lookupStatement(policy: ObjectConditions) {
  const parameters = LOOKUP_STATEMENT.parameters.with(policy.parameterNames.filter((name) => name !== 'scoreAt'));
  const narrowed = policy.conditions('o', parameters.$);
  return { text: narrowed === '' ? LOOKUP_STATEMENT.text : LOOKUP(narrowed), parameters };
}
