/**
 * The network searches' statements (NetworkService), as text with their parameters, in a module that imports
 * nothing but SQL fragments and the named-parameters helper: the bench (row 12) loads them from the service
 * build, so its raw `pg` baseline runs exactly these statements.
 */
import { sizeBoundedPage } from '../../common/pagination/size-bounded-page.js';
import { namedParameters } from '../../common/sql/named-parameters.js';
import { isoUtc } from '../../common/sql/timestamps.js';
import type { ObjectConditions } from '../../read-policy/read-policy.js';

/**
 * A keyset page (by object id, like the listing) of the objects of collection $1 whose network key
 * satisfies `condition` against $2 (inet), after object $3, at most $4 rows. The conditions are operators
 * of the GiST index on (collection_id, network) (migration AddObjectKeyNetwork). Both steps are fenced
 * (MATERIALIZED) on purpose. Unfenced, for a LIMIT PostgreSQL may walk the key table's object_id index in
 * page order filtering every row, or merge-join the matches with the whole object table in id order
 * (both measured on 40k rows): each is a scan of every collection. Fenced, it reads the matching index
 * entries, sorts only their object ids for the page, and fetches those page rows by primary key, as many
 * as fit in the byte cap $5 (see sizeBoundedPage). `narrowed`: the read policy's conditions, checked on each
 * hit's object inside the fence, so a page is never short of what matches.
 */
function page(condition: string, narrowed = ''): string {
  return `WITH hits AS MATERIALIZED (
            SELECT k.object_id FROM intel_object_key k
             WHERE k.collection_id = $1 AND ${condition} AND k.object_id > $3
               -- Expired objects are gone (hidden at once, before the expiry job removes them).
               AND NOT EXISTS (SELECT 1 FROM intel_object x WHERE x.id = k.object_id AND x.expires_at <= now())${narrowed}
          ),
          page AS MATERIALIZED (SELECT object_id FROM hits ORDER BY object_id LIMIT $4)
          ${sizeBoundedPage(
            {
              select: `o.id AS position, o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt", o.tlp`,
              from: 'FROM page JOIN intel_object o ON o.id = page.object_id',
              orderBy: 'page.object_id',
              rowBytes: 'o.row_bytes',
            },
            '$4',
            '$5',
          )}
          ORDER BY position`;
}

const CONDITIONS = {
  /** Addresses and networks inside $2, $2 itself included. */
  within: `k.network <<= $2::inet`,
  /** Networks containing $2, $2 itself included. */
  contains: `k.key_type = 'IPNetwork' AND k.network >>= $2::inet`,
} as const;

/** The searches of a read nothing narrows, and their parameters by name ($1 to $5 above, in that order). */
export const NETWORK_SEARCHES = {
  within: page(CONDITIONS.within),
  contains: page(CONDITIONS.contains),
  parameters: namedParameters(['collectionId', 'network', 'afterId', 'limit', 'maxBytes']),
} as const;

/** The search of `mode` under a read policy: the statement above when the policy narrows nothing, its parameters after $5. */
export function networkSearch(mode: keyof typeof CONDITIONS, policy: ObjectConditions) {
  const parameters = NETWORK_SEARCHES.parameters.with(policy.parameterNames);
  const narrowed = policy.conditions('f', parameters.$);
  const text =
    narrowed === '' ? NETWORK_SEARCHES[mode] : page(CONDITIONS[mode], ` AND EXISTS (SELECT 1 FROM intel_object f WHERE f.id = k.object_id ${narrowed})`);
  return { text, parameters };
}
