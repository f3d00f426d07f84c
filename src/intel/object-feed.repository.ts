import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { SizedRow } from '../common/pagination/page.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { UNFILTERED, type ObjectConditions, type ReadPolicy } from '../read-policy/read-policy.js';
import type { ChangeOperation, RemoveReason } from './entities/change.entity.js';
import { storedObject, type MarkedRow, type StoredObject, type WrittenChange } from './object-rows.js';
import { FEED_STATEMENTS, feedPageStatement, type FeedPage } from './object-statements.js';
import { versionsStatement, type VersionQuery } from './object-versions-statements.js';

/** A feed read that also numbers the collection's committed changes (ChangeSequencer.numberAndRead). */
export interface Numbering {
  manager: EntityManager;
  /** The numbering CTEs for the statement (collection $1). */
  ctes: string;
}

/**
 * The SQL of the collection's feed reads: the object listing's pages and the change feed's pages, each with
 * the feed's bounds in the same statement, and the change records of a batch read back after its commit.
 */
@Injectable()
export class ObjectFeedRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The positions a versions walk (TAXII) reads, with the feed's bounds (their statement: object-versions-statements.ts). */
  versions<Row>(
    collectionId: number,
    query: VersionQuery,
  ): Promise<({ lastSeq: string; pending: boolean; position: string | null; pageFull: boolean } & Row)[]> {
    const statement = versionsStatement(collectionId, query, this.config.pageMaxBytes);
    return this.dataSource.query(statement.text, statement.values);
  }

  /**
   * A page of objects after `afterId` with the feed position it reflects: snapshot + later changes = the
   * collection (decisions §8). `position` is the object id.
   *
   * Its statement and why its plan holds: FEED_PAGES in object-statements.ts.
   */
  listPage(policy: ReadPolicy, collectionId: number, afterId: number, limit: number, numbering?: Numbering) {
    return this.withFeedBounds<MarkedRow>('listPage', collectionId, afterId, limit, numbering, policy);
  }

  /**
   * Changes after `afterSeq` with the feed's bounds (so pruning cannot interleave); `position` is the seq.
   */
  changesAfter(collectionId: number, afterSeq: number, limit: number) {
    return this.withFeedBounds<{ operation: ChangeOperation; object: StoredObject; reason: RemoveReason | null; tlp: number }>(
      'changesAfter',
      collectionId,
      afterSeq,
      limit,
    );
  }

  /**
   * The change records of collection `collectionId` with ids `firstId` to `lastId`, in id order: what one
   * statement under the collection's exclusive writer lock recorded (a batch), read back after its
   * commit, numbered or not yet.
   */
  async changesWritten(collectionId: number, firstId: string, lastId: string): Promise<WrittenChange[]> {
    const rows: { operation: ChangeOperation; object: StoredObject; reason: RemoveReason | null }[] = await this.dataSource.query(
      `SELECT operation, object, reason FROM intel_change WHERE collection_id = $1 AND id BETWEEN $2 AND $3 ORDER BY id`,
      [collectionId, firstId, lastId],
    );
    return rows.map(({ operation, object, reason }) => ({ operation, object: storedObject(object), ...(reason !== null && { reason }) }));
  }

  /**
   * Up to `limit` rows of `page` with the collection's feed bounds, in one statement (feedPageStatement),
   * numbering the collection's committed records in it when given `numbering` (ChangeSequencer.numberAndRead).
   */
  private async withFeedBounds<Row>(
    page: FeedPage,
    collectionId: number,
    after: number,
    limit: number,
    numbering?: Numbering,
    /** A listing's read policy: its conditions narrow the walk, with their parameters after the feed's. */
    policy: ObjectConditions = UNFILTERED,
  ): Promise<{ lastSeq: number; prunedSeq: number; pending: boolean; rows: (Row & SizedRow & { position: string })[] }> {
    const runner = numbering?.manager ?? this.dataSource;
    const p = FEED_STATEMENTS.parameters.with(policy.parameterNames);
    const conditions = policy.conditions('intel_object', p.$);
    const rows: ({ lastSeq: string; prunedSeq: string; pending: boolean; position: string | null } & Row & SizedRow)[] = await runner.query(
      numbering || conditions ? feedPageStatement(page, numbering?.ctes, conditions) : FEED_STATEMENTS[page],
      p.values({ collectionId, after, limit, maxBytes: this.config.pageMaxBytes, ...policy.values() }),
    );
    return {
      lastSeq: Number(rows[0].lastSeq),
      prunedSeq: Number(rows[0].prunedSeq),
      pending: rows[0].pending,
      rows: rows.filter((row): row is typeof row & { position: string } => row.position !== null),
    };
  }
}
