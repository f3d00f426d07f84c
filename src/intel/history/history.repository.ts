import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import type { SizedRow } from '../../common/pagination/page.js';
import { sizeBoundedPage } from '../../common/pagination/size-bounded-page.js';
import { isoUtc } from '../../common/sql/timestamps.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { ChangeOperation, RemoveReason } from '../entities/change.entity.js';
import type { StoredObject } from '../object-rows.js';
import { LIVE } from '../object-statements.js';
import type { WriteVia } from '../write-origin.js';

/** A change record as history shows it. */
export interface HistoryRow extends SizedRow {
  position: string;
  at: string;
  operation: ChangeOperation;
  reason: RemoveReason | null;
  keyID: number | null;
  requestID: string | null;
  via: WriteVia | null;
  source: string | null;
  object: StoredObject;
  /** The object's marking at the record (a rank). */
  tlp: number;
}

/** The live object holding a key, as provenance needs it: its keys and its api claim (both times null when none). */
export interface LiveObjectRow {
  keys: ObjectKey[];
  apiFirstSeenAt: string | null;
  apiLastSeenAt: string | null;
}

/**
 * The lives of collection $1 that held the key ($2 type, $3 value): the object holding it now (live or
 * expired and not yet removed: its key row), and every life that ended, whose `Remove` record holds all the
 * keys it ever had (keys only join an object and leave with it), found by the GIN index over the keys of
 * Remove records (migration ObjectHistoryAndApiClaim).
 */
const LIVES_OF_KEY = `SELECT o.uid FROM intel_object_key k JOIN intel_object o ON o.id = k.object_id
                        WHERE k.collection_id = $1 AND k.key_type = $2 AND k.value = $3
                       UNION ALL
                       SELECT r.object_uid FROM intel_change r
                        WHERE r.operation = 'Remove' AND r.collection_id = $1
                          AND r.object -> 'keys' @> jsonb_build_array(jsonb_build_object('type', $2::text, 'value', $3::text))`;

/** The SQL of object history and provenance (extensions §14): reads only. */
@Injectable()
export class HistoryRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Up to `limit` changes of the key's lives before position `before` (null: from the newest), newest first,
   * bounded by PAGE_MAX_BYTES too (contexts are whole). `pending`: the collection has committed records
   * not numbered yet (the caller waits for them: ChangesService.caughtUp). Two lives of one key never
   * overlap (the key is free only once the first life's Remove committed), so position order is life order.
   */
  async page(collectionId: number, key: ObjectKey, before: number | null, limit: number): Promise<{ pending: boolean; rows: HistoryRow[] }> {
    const rows: ({ pending: boolean; position: string | null } & Omit<HistoryRow, 'position'>)[] = await this.dataSource.query(
      `SELECT EXISTS (SELECT 1 FROM intel_change p WHERE p.seq IS NULL AND p.collection_id = $1::int) AS pending, r.*
         FROM (SELECT 1) one
         LEFT JOIN (${sizeBoundedPage(
           {
             select: `ch.seq AS position, ${isoUtc('ch.created_at')} AS at, ch.operation,
                      CASE WHEN ch.operation = 'Remove' THEN COALESCE(ch.reason, 'Deleted') END AS reason,
                      ch.key_id AS "keyID", ch.request_id AS "requestID", ch.via, ch.source, ch.object, ch.tlp`,
             from: `FROM intel_change ch
                   WHERE ch.collection_id = $1 AND ch.object_uid IN (${LIVES_OF_KEY})
                     AND ch.seq < COALESCE($4::bigint, 9223372036854775807)`,
             orderBy: 'ch.seq DESC',
             rowBytes: 'ch.row_bytes',
           },
           '$5',
           '$6',
         )}) r ON true
        ORDER BY r.position DESC`,
      [collectionId, key.type, key.value, before, limit, this.config.pageMaxBytes],
    );
    return {
      pending: rows[0].pending,
      rows: rows.filter((row): row is typeof row & { position: string } => row.position !== null),
    };
  }

  /** The live object of the collection holding the key: its keys and its api claim (null when none); undefined when none. */
  async liveObject(collectionId: number, key: ObjectKey): Promise<LiveObjectRow | undefined> {
    const rows: LiveObjectRow[] = await this.dataSource.query(
      `SELECT o.keys, ${isoUtc('o.api_first_seen_at')} AS "apiFirstSeenAt", ${isoUtc('o.api_last_seen_at')} AS "apiLastSeenAt"
         FROM intel_object_key k JOIN intel_object o ON o.id = k.object_id
        WHERE k.collection_id = $1 AND k.key_type = $2 AND k.value = $3 AND ${LIVE('o')}`,
      [collectionId, key.type, key.value],
    );
    return rows[0];
  }
}
