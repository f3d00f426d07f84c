import { Injectable } from '@nestjs/common';
import { normalizeKey } from '../../common/indicators/indicators.js';
import { afterIdCursor, afterIdFromCursor } from '../../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../../common/pagination/page.js';
import type { ReadPolicy } from '../../read-policy/read-policy.js';
import { SightingSummariesService } from '../../sightings/sighting-summaries.service.js';
import { SourceClaimsService } from '../../sources/source-claims.service.js';
import { ChangesService } from '../changes.service.js';
import { CollectionsService } from '../collections.service.js';
import type { DeleteObjectQueryDto } from '../dto/object.dto.js';
import { objectView } from '../object-rows.js';
import { ObjectErrors } from '../objects.errors.js';
import type { ClaimView, HistoryEntryView, HistoryQueryDto, ProvenanceView } from './history.dto.js';
import { HistoryRepository, type HistoryRow } from './history.repository.js';

function entryView(row: HistoryRow): HistoryEntryView {
  return {
    position: Number(row.position),
    at: row.at,
    operation: row.operation,
    reason: row.reason,
    keyID: row.keyID,
    requestID: row.requestID,
    via: row.via,
    source: row.source,
    obj: objectView({ ...row.object, tlp: row.tlp }),
  };
}

/**
 * Who put an object there and how (extensions §14): the history of a key's lives, read from the change
 * records (kept HISTORY_RETENTION_DAYS), and the provenance of the live object holding it.
 */
@Injectable()
export class HistoryService {
  constructor(
    private readonly repository: HistoryRepository,
    private readonly collections: CollectionsService,
    private readonly changes: ChangesService,
    private readonly sightings: SightingSummariesService,
    private readonly sourceClaims: SourceClaimsService,
  ) {}

  /**
   * Newest first, paged by position. Read once every change committed before the call is numbered
   * (read-your-writes, as the feed): every entry then has its position. Under the policy's ceiling only
   * what the key may see (extensions §19): nothing of an object marked above it, no record marked above it.
   */
  async history(policy: ReadPolicy, collectionName: string, query: HistoryQueryDto): Promise<PageResult<HistoryEntryView>> {
    const page = pageRequestOf(query);
    const collection = await this.collections.findByName(collectionName);
    const key = normalizeKey({ type: query.objectKeyType, value: query.objectKey });
    const before = page.cursor === undefined ? null : afterIdFromCursor(page.cursor);
    const { rows } = await this.changes.caughtUp(() => this.repository.page(policy, collection.id, key, before, page.limit + 1));
    return keysetPage(rows, page.limit, (row) => afterIdCursor(Number(row.position)), entryView);
  }

  /**
   * The claims (`api` first, then the sources by name), sighting summary and warninglist warnings of the
   * live object holding the key; 404 ObjectNotFound when none the policy lets the request see. Each comes
   * from the area that owns it.
   */
  async provenance(policy: ReadPolicy, collectionName: string, query: DeleteObjectQueryDto): Promise<ProvenanceView> {
    const collection = await this.collections.findByName(collectionName);
    const key = normalizeKey({ type: query.objectKeyType, value: query.objectKey });
    const found = await this.repository.liveObject(policy, collection.id, key);
    if (found === undefined) throw ObjectErrors.objectNotFound();
    const [sources, sightings, lists] = await Promise.all([
      this.sourceClaims.claimsOf(collection.name, found.keys),
      this.sightings.summaryOf(found.keys),
      policy.listSet(),
    ]);
    const api: ClaimView[] =
      found.apiFirstSeenAt === null || found.apiLastSeenAt === null
        ? []
        : [{ origin: 'api', source: null, firstSeenAt: found.apiFirstSeenAt, lastSeenAt: found.apiLastSeenAt }];
    return {
      claims: [...api, ...sources.map(({ source, firstSeenAt, lastSeenAt }): ClaimView => ({ origin: 'source', source, firstSeenAt, lastSeenAt }))],
      sightings,
      // Only a File has several keys, one per hash type: no list entry matches two of them.
      warnings: found.keys.flatMap((objectKey) => lists.warningsOf(objectKey)),
      score: found.score,
    };
  }
}
