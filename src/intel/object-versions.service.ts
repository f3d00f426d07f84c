import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { sizeBoundedPage } from '../common/pagination/size-bounded-page.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ChangesService } from './changes.service.js';
import { CollectionsService, isoMicros } from './collections.service.js';
import type { ChangeOperation, RemoveReason } from './entities/change.entity.js';
import { storedObject, type StoredObject } from './objects.repository.js';

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
}

/** One feed position as a version of its object's life. */
export interface ObjectVersionRow {
  position: number;
  /** The position's time, UTC with microseconds; `nextMicrosecond` one microsecond later. */
  at: string;
  nextMicrosecond: string;
  operation: ChangeOperation;
  reason: RemoveReason | null;
  object: StoredObject;
  uid: string;
  /** The life's first add, UTC with microseconds. */
  addedAt: string;
}

export interface ObjectVersionsPage {
  /** The collection's last position: every position up to it is visible to the read. */
  lastSeq: number;
  rows: ObjectVersionRow[];
  /** Rows after the last one may exist (the limit or the byte cap was reached). */
  full: boolean;
}

/**
 * The change feed read as versions of object lives, for standard feeds (TAXII): a keyset walk over a
 * collection's positions with filters on time, lives and versions. Gap-free exactly as the feed is (see
 * CONTRIBUTING.md, "The change feed"): positions and their times are given together, in order, to
 * committed records only, so a reader that sees a position or a time sees every earlier one, and a later
 * change gets a later position and a later time. `last` and `first` are judged among the numbered records
 * the statement sees; a later version appears at a later position.
 */
@Injectable()
export class ObjectVersionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly collections: CollectionsService,
    private readonly changes: ChangesService,
  ) {}

  /** Read after every change committed before the call is numbered (read-your-writes, as the feed). */
  async read(collectionName: string, query: VersionQuery): Promise<ObjectVersionsPage> {
    const collection = await this.collections.findByName(collectionName);
    const page = await this.changes.caughtUp(() => this.readOnce(collection.id, query));
    return { lastSeq: page.lastSeq, rows: page.rows, full: page.full };
  }

  private async readOnce(collectionId: number, query: VersionQuery) {
    const versions = query.versions;
    const params: unknown[] = [collectionId, query.afterSeq, query.limit, this.config.pageMaxBytes];
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
                 ch.operation, ch.reason, ch.object, ch.object_uid AS uid, ${isoMicros('ch.object_added_at')} AS "addedAt"`,
        from: `FROM intel_change ch WHERE ${conditions.join(' AND ')}`,
        orderBy: 'ch.seq',
        rowBytes: 'ch.row_bytes',
      },
      '$3',
      '$4',
    );
    const rows: ({ lastSeq: string; pending: boolean; position: string | null; pageFull: boolean } & Omit<ObjectVersionRow, 'position'>)[] =
      await this.dataSource.query(
        `SELECT c.last_seq AS "lastSeq",
                EXISTS (SELECT 1 FROM intel_change p WHERE p.seq IS NULL AND p.collection_id = $1::int) AS pending, r.*
           FROM intel_collection c
           LEFT JOIN (${rowsQuery}) r ON true
          WHERE c.id = $1::int
          ORDER BY r.position`,
        params,
      );
    const found = rows.filter((row) => row.position !== null);
    return {
      lastSeq: Number(rows[0].lastSeq),
      pending: rows[0].pending,
      full: found.length === query.limit || found.some((row) => row.pageFull),
      rows: found.map(
        (row): ObjectVersionRow => ({
          position: Number(row.position),
          at: row.at,
          nextMicrosecond: row.nextMicrosecond,
          operation: row.operation,
          reason: row.operation === 'Remove' ? (row.reason ?? 'Deleted') : null,
          object: storedObject(row.object),
          uid: row.uid,
          addedAt: row.addedAt,
        }),
      ),
    };
  }
}
