/**
 * The statement of a page of object versions (ObjectVersionsService, read by TAXII), built from the query
 * with its values, in a module that imports nothing but SQL fragments: the bench (row 15) loads it from the
 * service build, so its raw `pg` baseline runs exactly this statement.
 */
import { sizeBoundedPage } from '../common/pagination/size-bounded-page.js';
import { isoMicros } from '../common/sql/timestamps.js';
import { scoreSql } from '../scoring/score-sql.js';
import { LIVE } from './object-statements.js';

/** Which versions of each object life: every one, or its first, its last, those at given feed times. */
export type VersionSelector = 'all' | { first: boolean; last: boolean; at: string[] };

export interface VersionQuery {
  /** Feed positions after this one. */
  afterSeq: number;
  /** Only positions whose time is at or after this one (UTC, microseconds). */
  notBefore?: string;
  /** Only these object lives. */
  lives?: string[];
  versions: VersionSelector;
  /** Rows at most (the page is bounded by PAGE_MAX_BYTES too). */
  limit: number;
  /**
   * The read policy's ceiling (extensions §19), when it leaves anything out: only records marked within it.
   * With `lives`, also only lives whose last record is marked within it (an object named by its id is the
   * object as it is now: marked above the ceiling, none of its versions is there).
   */
  maxTlp?: number;
  /**
   * `minScore` (extensions §18): only versions of lives whose live object scores at least `min` at `at`. A life
   * that ended (or its object expired) has no score: none of its versions is there.
   */
  score?: { min: number; at: string };
}

/**
 * The page of versions after `query.afterSeq` in collection `collectionId`, with the collection's last
 * position and whether it has unnumbered records, in one statement: $1 the collection, $2 the position, $3
 * the rows, $4 the byte cap (PAGE_MAX_BYTES), then the values of the filters the query names.
 */
export function versionsStatement(collectionId: number, query: VersionQuery, maxBytes: number): { text: string; values: unknown[] } {
  const versions = query.versions;
  const params: unknown[] = [collectionId, query.afterSeq, query.limit, maxBytes];
  const param = (value: unknown) => `$${params.push(value)}`;
  // Records below the feed's pruned position are kept for object history only: this feed answers as if
  // they were gone, as the change feed does (CONTRIBUTING.md, "The change feed").
  const floor = `(SELECT pruned_seq FROM intel_collection WHERE id = $1)`;
  const conditions = ['ch.collection_id = $1', `ch.seq > GREATEST($2::bigint, ${floor})`];
  if (query.notBefore !== undefined) {
    // Positions are in time order: start after the last one before `notBefore` (one probe of the
    // (collection_id, seq_at) index), instead of filtering every position by time.
    conditions.push(`ch.seq > COALESCE((SELECT b.seq FROM intel_change b WHERE b.collection_id = $1 AND b.seq_at < ${param(query.notBefore)}::timestamptz
                                          ORDER BY b.seq_at DESC LIMIT 1), 0)`);
  }
  if (query.lives !== undefined) conditions.push(`ch.object_uid = ANY(${param(query.lives)}::uuid[])`);
  if (query.maxTlp !== undefined) {
    const maxTlp = `${param(query.maxTlp)}::smallint`;
    conditions.push(`ch.tlp <= ${maxTlp}`);
    // The life's last record, numbered or not (DESC puts NULL first): one probe of the (collection_id, object_uid, seq) index.
    if (query.lives !== undefined) {
      conditions.push(
        `(SELECT l.tlp FROM intel_change l WHERE l.collection_id = $1 AND l.object_uid = ch.object_uid ORDER BY l.seq DESC LIMIT 1) <= ${maxTlp}`,
      );
    }
  }
  if (query.score !== undefined) {
    // The life's live object, by its record's first key (keys leave an object only with it): one probe of the key
    // table's primary key, then the object row the score function takes whole.
    conditions.push(`EXISTS (SELECT 1 FROM intel_object_key sk JOIN intel_object so ON so.id = sk.object_id
                              WHERE sk.key_type = ch.object->'keys'->0->>'type' AND sk.value = ch.object->'keys'->0->>'value'
                                AND sk.collection_id = $1 AND so.uid = ch.object_uid AND ${LIVE('so')}
                                AND ${scoreSql('so', `${param(query.score.at)}`)} >= ${param(query.score.min)}::float8)`);
  }
  if (versions !== 'all') {
    const later = (op: string) =>
      `NOT EXISTS (SELECT 1 FROM intel_change v WHERE v.collection_id = $1 AND v.object_uid = ch.object_uid AND v.seq ${op} ch.seq AND v.seq > ${floor})`;
    const wanted = [
      ...(versions.last ? [later('>')] : []),
      ...(versions.first ? [later('<')] : []),
      ...(versions.at.length > 0 ? [`ch.seq_at = ANY(${param(versions.at)}::timestamptz[])`] : []),
    ];
    conditions.push(wanted.length === 0 ? 'false' : `(${wanted.join(' OR ')})`);
  }
  const rowsQuery = sizeBoundedPage(
    {
      select: `ch.seq AS position, ${isoMicros('ch.seq_at')} AS at, ${isoMicros(`ch.seq_at + interval '1 microsecond'`)} AS "nextMicrosecond",
               ch.operation, ch.reason, ch.object, ch.tlp, ch.object_uid AS uid, ${isoMicros('ch.object_added_at')} AS "addedAt"`,
      from: `FROM intel_change ch WHERE ${conditions.join(' AND ')}`,
      orderBy: 'ch.seq',
      rowBytes: 'ch.row_bytes',
    },
    '$3',
    '$4',
  );
  return {
    text: `SELECT c.last_seq AS "lastSeq",
            EXISTS (SELECT 1 FROM intel_change p WHERE p.seq IS NULL AND p.collection_id = $1::int) AS pending, r.*
       FROM intel_collection c
       LEFT JOIN (${rowsQuery}) r ON true
      WHERE c.id = $1::int
      ORDER BY r.position`,
    values: params,
  };
}
