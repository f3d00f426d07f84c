import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import type { SizedRow } from '../../common/pagination/page.js';
import { sizeBoundedPage } from '../../common/pagination/size-bounded-page.js';
import { namedParameters } from '../../common/sql/named-parameters.js';
import { isoUtc } from '../../common/sql/timestamps.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { ReadPolicy } from '../../read-policy/read-policy.js';
import { scoreSql } from '../../scoring/score-sql.js';
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
  /** Its score at the policy's `scoreAt` (extensions §18). */
  score: number;
}

/** The parameters of both statements, by name; a ceiling's placeholder after them when the read policy's is below RED. */
const KEY_PARAMETERS = namedParameters(['collectionId', 'keyType', 'keyValue']);
const PAGE_PARAMETERS = KEY_PARAMETERS.with(['before', 'limit', 'maxBytes']);

/**
 * The lives of collection $1 that held the key ($2 type, $3 value): the object holding it now (live or
 * expired and not yet removed: its key row), and every life that ended, whose `Remove` record holds all the
 * keys it ever had (keys only join an object and leave with it), found by the GIN index over the keys of
 * Remove records (migration ObjectHistoryAndApiClaim).
 *
 * Under a `ceiling` (a placeholder; extensions §19) the object holding the key now counts only when marked
 * within it (an object above it does not exist for the key), and a life that ended only when a record within
 * it shows the key (not one that joined the life while it was marked above).
 */
function livesOfKey(ceiling: string | undefined): string {
  const held = `jsonb_build_array(jsonb_build_object('type', $2::text, 'value', $3::text))`;
  const [seen, shown] =
    ceiling === undefined
      ? ['', '']
      : [
          ` AND o.tlp <= ${ceiling}`,
          ` AND EXISTS (SELECT FROM intel_change v WHERE v.collection_id = $1 AND v.object_uid = r.object_uid
                                                   AND v.tlp <= ${ceiling} AND v.object -> 'keys' @> ${held})`,
        ];
  return `SELECT o.uid FROM intel_object_key k JOIN intel_object o ON o.id = k.object_id
                        WHERE k.collection_id = $1 AND k.key_type = $2 AND k.value = $3${seen}
                       UNION ALL
                       SELECT r.object_uid FROM intel_change r
                        WHERE r.operation = 'Remove' AND r.collection_id = $1
                          AND r.object -> 'keys' @> ${held}${shown}`;
}

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
   * Under the policy's ceiling (below RED) only the lives the key may see (livesOfKey), and of them only the
   * records marked within it; otherwise the statement as it was before markings.
   */
  async page(
    policy: ReadPolicy,
    collectionId: number,
    key: ObjectKey,
    before: number | null,
    limit: number,
  ): Promise<{ pending: boolean; rows: HistoryRow[] }> {
    const p = PAGE_PARAMETERS.with(policy.recordParameterNames);
    const ceiling = policy.ceilingSql(p.$);
    const rows: ({ pending: boolean; position: string | null } & Omit<HistoryRow, 'position'>)[] = await this.dataSource.query(
      `SELECT EXISTS (SELECT 1 FROM intel_change p WHERE p.seq IS NULL AND p.collection_id = $1::int) AS pending, r.*
         FROM (SELECT 1) one
         LEFT JOIN (${sizeBoundedPage(
           {
             select: `ch.seq AS position, ${isoUtc('ch.created_at')} AS at, ch.operation,
                      CASE WHEN ch.operation = 'Remove' THEN COALESCE(ch.reason, 'Deleted') END AS reason,
                      ch.key_id AS "keyID", ch.request_id AS "requestID", ch.via, ch.source, ch.object, ch.tlp`,
             from: `FROM intel_change ch
                   WHERE ch.collection_id = $1 AND ch.object_uid IN (${livesOfKey(ceiling)})
                     AND ch.seq < COALESCE(${p.$.before}::bigint, 9223372036854775807)${ceiling === undefined ? '' : ` AND ch.tlp <= ${ceiling}`}`,
             orderBy: 'ch.seq DESC',
             rowBytes: 'ch.row_bytes',
           },
           p.$.limit,
           p.$.maxBytes,
         )}) r ON true
        ORDER BY r.position DESC`,
      p.values({ collectionId, keyType: key.type, keyValue: key.value, before, limit, maxBytes: this.config.pageMaxBytes, ...policy.values() }),
    );
    return {
      pending: rows[0].pending,
      rows: rows.filter((row): row is typeof row & { position: string } => row.position !== null),
    };
  }

  /**
   * The live object of the collection holding the key, when the policy lets the request see it: its keys and
   * its api claim (null when none) and its score at the policy's `scoreAt`; undefined when none.
   */
  async liveObject(policy: ReadPolicy, collectionId: number, key: ObjectKey): Promise<LiveObjectRow | undefined> {
    const p = KEY_PARAMETERS.with(['scoreAt', ...policy.parameterNames.filter((name) => name !== 'scoreAt')]);
    const rows: LiveObjectRow[] = await this.dataSource.query(
      `SELECT o.keys, ${isoUtc('o.api_first_seen_at')} AS "apiFirstSeenAt", ${isoUtc('o.api_last_seen_at')} AS "apiLastSeenAt",
              ${scoreSql('o', p.$.scoreAt)} AS score
         FROM intel_object_key k JOIN intel_object o ON o.id = k.object_id
        WHERE k.collection_id = $1 AND k.key_type = $2 AND k.value = $3 AND ${LIVE('o')}${policy.conditions('o', p.$)}`,
      p.values({ collectionId, keyType: key.type, keyValue: key.value, ...policy.values() }),
    );
    return rows[0];
  }
}
