import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The service's hot-path SQL, copied VERBATIM for the raw `pg` baselines of rows 3–6, so that a baseline
 * runs exactly the statements the service runs and the ratio shows only what the service adds around
 * them (HTTP, framework, validation, mapping, JSON). When a source statement changes, change it here too:
 * each constant names its source.
 */

/**
 * The statements of single adds and deletes, and of the task queue, are not copied: they are loaded from
 * the service build under test (src/intel/object-statements.ts, src/insight/task-statements.ts), so the raw
 * baselines of rows 3 and 6 and the stack floor run the very text the service runs (adds: prepared under
 * the same names), whatever the service changes. $1 collection id; see ObjectsRepository for the
 * parameters of each.
 */
export interface ServiceStatement {
  name: string;
  text: string;
}
export interface ObjectStatements {
  findHits: ServiceStatement;
  insert: ServiceStatement;
  update: ServiceStatement;
  remove: ServiceStatement;
}

/**
 * The last parameters of the write statements (insert, update, remove): the write's origin (`via`, key
 * id, request id, source; see src/intel/write-origin.ts), as an API request of one key would give them.
 */
export const RAW_WRITE_ORIGIN = ['api', 1, 'bench-raw-baseline', null] as const;

/**
 * The task queue's take and completion (src/insight/task-statements.ts), loaded the same way: TAKE's $1
 * limit, $2 max deliveries, $3 lease seconds, $4/$5 the exhausted error; COMPLETE's $1 task id, $2 max
 * deliveries, $3 result.
 */
export interface TaskStatements {
  take: string;
  complete: string;
}

/** `exported` of the module `path` of the service build in `serviceDir` (a dist/ folder). */
async function loadFromBuild<Statements>(serviceDir: string, path: string, exported: string): Promise<Statements> {
  const file = join(serviceDir, ...path.split('/'));
  const loaded = (await import(pathToFileURL(file).href)) as Record<string, Statements | undefined>;
  const statements = loaded[exported];
  if (!statements) throw new Error(`${file} exports no ${exported}: a service build older than the bench`);
  return statements;
}

/** OBJECT_STATEMENTS of the service build in `serviceDir`. */
export const loadObjectStatements = (serviceDir: string) =>
  loadFromBuild<ObjectStatements>(serviceDir, 'intel/object-statements.js', 'OBJECT_STATEMENTS');

/** TASK_STATEMENTS of the service build in `serviceDir`. */
export const loadTaskStatements = (serviceDir: string) =>
  loadFromBuild<TaskStatements>(serviceDir, 'insight/task-statements.js', 'TASK_STATEMENTS');

const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** src/intel/objects.repository.ts — withFeedBounds(page): a keyset page joined to the collection's feed bounds. */
function withFeedBounds(page: string): string {
  return `
         SELECT c.last_seq AS "lastSeq", c.pruned_seq AS "prunedSeq",
                EXISTS (SELECT 1 FROM intel_change p WHERE p.seq IS NULL AND p.collection_id = $1::int) AS pending, r.*
           FROM intel_collection c
         LEFT JOIN (${page}) r ON true
        WHERE c.id = $1::int
        ORDER BY r.position`;
}

/**
 * src/common/pagination/size-bounded-page.ts — sizeBoundedPage(parts, limit, maxBytes): a keyset page also
 * bounded in bytes (`limit` and `maxBytes` are placeholders; `rowBytes` the row size expression).
 */
function sizeBoundedPage(select: string, from: string, orderBy: string, rowBytes = 'row_bytes', limit = '$3', maxBytes = '$4'): string {
  return `SELECT * FROM (
            SELECT ${select},
                   sum(${rowBytes}) OVER page_order - (${rowBytes}) < ${maxBytes} AS "startsWithin",
                   sum(${rowBytes}) OVER page_order >= ${maxBytes} AS "pageFull"
              ${from}
            WINDOW page_order AS (ORDER BY ${orderBy} ROWS UNBOUNDED PRECEDING)
             ORDER BY ${orderBy}
             LIMIT ${limit}
          ) sized
          WHERE "startsWithin"`;
}

// src/intel/objects.repository.ts — ObjectsRepository.listPage ($1 collection, $2 after id, $3 = page limit + 1,
// $4 PAGE_MAX_BYTES).
export const LIST_PAGE = withFeedBounds(
  sizeBoundedPage(
    `id AS position, intel_object.type, intel_object.keys, intel_object.context, to_char(intel_object.expires_at AT TIME ZONE 'UTC', ${ISO_UTC}) AS "expiresAt"`,
    `FROM intel_object WHERE (collection_id, id) > ($1, $2) AND collection_id <= $1 AND (intel_object.expires_at IS NULL OR intel_object.expires_at > now())`,
    'collection_id, id',
  ),
);

// src/intel/objects.repository.ts — ObjectsRepository.changesAfter ($1 collection, $2 after seq, $3 = page limit,
// $4 PAGE_MAX_BYTES).
export const CHANGES_AFTER = withFeedBounds(
  sizeBoundedPage(
    `seq AS position, operation, object, CASE WHEN operation = 'Remove' THEN COALESCE(reason, 'Deleted') END AS reason`,
    'FROM intel_change WHERE collection_id = $1 AND seq > $2',
    'seq',
  ),
);

/** The service's default PAGE_MAX_BYTES (src/config/app-config.ts), the byte bound of the statements above. */
export const PAGE_MAX_BYTES = 8 * 1024 * 1024;

/** src/config/app-config.ts defaults the bench's service runs with (TASK_MAX_DELIVERIES, TASK_LEASE_SECONDS, DATABASE_POOL_SIZE). */
export const TASK_MAX_DELIVERIES = 5;
export const TASK_LEASE_SECONDS = 300;
export const DATABASE_POOL_SIZE = 24;
// src/insight/insight.errors.ts — deliveryLimitError(maxDeliveries).
export const DELIVERY_LIMIT_ERROR = { code: 'DeliveryLimitExceeded', message: `no executor reported a result within the lease on any of ${TASK_MAX_DELIVERIES} deliveries` };

// src/intel/lookup/lookup.service.ts — LOOKUP ($1 key types, $2 values, $3 reads all, $4 readable resource ids,
// $5 collection names or null, $6 PAGE_MAX_BYTES; isoUtc and LIVE('o') expanded).
export const LOOKUP = `
  WITH found AS (
    SELECT q.i, c.name AS collection, o.id, o.row_bytes
      FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(type, value, i)
      JOIN intel_object_key k ON k.key_type = q.type AND k.value = q.value
      JOIN intel_collection c ON c.id = k.collection_id
      JOIN intel_object o ON o.id = k.object_id AND (o.expires_at IS NULL OR o.expires_at > now())
     WHERE ($3 OR c.resource_id = ANY($4::int[])) AND ($5::text[] IS NULL OR c.name = ANY($5::text[]))
  ), answered AS (
    SELECT i, sum(sum(row_bytes)) OVER (ORDER BY i) - sum(row_bytes) < $6 AS within FROM found GROUP BY i
  )
  SELECT f.i, f.collection, a.within, o.type, o.keys, o.context, to_char(o.expires_at AT TIME ZONE 'UTC', ${ISO_UTC}) AS "expiresAt"
    FROM found f
    JOIN answered a USING (i)
    LEFT JOIN intel_object o ON a.within AND o.id = f.id
   ORDER BY f.i, f.collection`;

// src/intel/network/network.service.ts — NETWORK_SEARCHES.within, i.e. page(`k.network <<= $2::inet`)
// ($1 collection, $2 network, $3 after object id, $4 = page limit + 1, $5 PAGE_MAX_BYTES).
export const NETWORK_WITHIN = `WITH hits AS MATERIALIZED (
            SELECT k.object_id FROM intel_object_key k
             WHERE k.collection_id = $1 AND k.network <<= $2::inet AND k.object_id > $3
               AND NOT EXISTS (SELECT 1 FROM intel_object x WHERE x.id = k.object_id AND x.expires_at <= now())
          ),
          page AS MATERIALIZED (SELECT object_id FROM hits ORDER BY object_id LIMIT $4)
          ${sizeBoundedPage(
            `o.id AS position, o.type, o.keys, o.context, to_char(o.expires_at AT TIME ZONE 'UTC', ${ISO_UTC}) AS "expiresAt"`,
            'FROM page JOIN intel_object o ON o.id = page.object_id',
            'page.object_id',
            'o.row_bytes',
            '$4',
            '$5',
          )}
          ORDER BY position`;

// src/intel/object-versions.service.ts — ObjectVersionsService.readOnce with the TAXII defaults (match[version]=last,
// no other filter; isoMicros of src/intel/collections.service.ts expanded): $1 collection, $2 after seq, $3 rows,
// $4 PAGE_MAX_BYTES.
const ISO_MICROS = (timestamp: string) => `to_char((${timestamp}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
export const TAXII_LAST_VERSIONS = `SELECT c.last_seq AS "lastSeq",
                EXISTS (SELECT 1 FROM intel_change p WHERE p.seq IS NULL AND p.collection_id = $1::int) AS pending, r.*
           FROM intel_collection c
           LEFT JOIN (${sizeBoundedPage(
             `ch.seq AS position, ${ISO_MICROS('ch.seq_at')} AS at, ${ISO_MICROS(`ch.seq_at + interval '1 microsecond'`)} AS "nextMicrosecond",
                 ch.operation, ch.reason, ch.object, ch.object_uid AS uid, ${ISO_MICROS('ch.object_added_at')} AS "addedAt"`,
             'FROM intel_change ch WHERE ch.collection_id = $1 AND ch.seq > GREATEST($2::bigint, (SELECT pruned_seq FROM intel_collection WHERE id = $1)) AND (NOT EXISTS (SELECT 1 FROM intel_change v WHERE v.collection_id = $1 AND v.object_uid = ch.object_uid AND v.seq > ch.seq AND v.seq > (SELECT pruned_seq FROM intel_collection WHERE id = $1)))',
             'ch.seq',
             'ch.row_bytes',
           )}) r ON true
          WHERE c.id = $1::int
          ORDER BY r.position`;

// src/intel/export/export.repository.ts — exportSql for format=txt with a keyType (objects(EACH_KEY) and
// LIVE('o') expanded), which the service runs as the query of a server-side cursor. Row 16's baseline
// runs it as `COPY (…) TO STDOUT`, so COPY cannot take parameters: $1 collection id, $2 key type, inlined.
export const exportTxtOfType = (collectionId: number, keyType: string) =>
  `SELECT k->>'value' FROM intel_object o CROSS JOIN LATERAL jsonb_array_elements(o.keys) k WHERE o.collection_id = ${collectionId} AND (o.expires_at IS NULL OR o.expires_at > now()) AND k->>'type' = '${keyType}' ORDER BY o.id`;
