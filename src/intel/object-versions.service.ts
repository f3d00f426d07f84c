import { Injectable } from '@nestjs/common';
import type { TlpRank } from '../common/markings/tlp.js';
import type { StoredScoreInputs } from '../scoring/score-inputs.js';
import { ChangesService } from './changes.service.js';
import { CollectionsService } from './collections.service.js';
import type { ChangeOperation, RemoveReason } from './entities/change.entity.js';
import { ObjectFeedRepository } from './object-feed.repository.js';
import { storedObject, type StoredObject } from './object-rows.js';
import type { VersionQuery } from './object-versions-statements.js';

/** One feed position as a version of its object's life. */
export interface ObjectVersionRow {
  position: number;
  /** The position's time, UTC with microseconds; `nextMicrosecond` one microsecond later. */
  at: string;
  nextMicrosecond: string;
  operation: ChangeOperation;
  reason: RemoveReason | null;
  object: StoredObject;
  /** The object's marking at this record (extensions §19). */
  tlp: TlpRank;
  uid: string;
  /** The life's first add, UTC with microseconds. */
  addedAt: string;
  /** The life's score without decay now (0 once it has ended): its indicator's STIX confidence (extensions §18). */
  confidence: number;
  /** The life's score inputs now (read with a `minScore` only): see scoreInputsSql. */
  scoreInputs?: StoredScoreInputs;
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
    private readonly feed: ObjectFeedRepository,
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
    const rows = await this.feed.versions<Omit<ObjectVersionRow, 'position'>>(collectionId, query);
    const found = rows.filter((row) => row.position !== null);
    return {
      lastSeq: Number(rows[0].lastSeq),
      pending: rows[0].pending,
      full: found.length === query.limit || found.some((row) => row.pageFull),
      rows: found.map((row): ObjectVersionRow => ({
        position: Number(row.position),
        at: row.at,
        nextMicrosecond: row.nextMicrosecond,
        operation: row.operation,
        reason: row.operation === 'Remove' ? (row.reason ?? 'Deleted') : null,
        object: storedObject(row.object),
        tlp: row.tlp,
        uid: row.uid,
        addedAt: row.addedAt,
        confidence: row.confidence,
        ...(row.scoreInputs && { scoreInputs: row.scoreInputs }),
      })),
    };
  }
}
