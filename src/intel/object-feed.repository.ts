import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { SizedRow } from '../common/pagination/page.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { PolicyParameter, ReadPolicy } from '../read-policy/read-policy.js';
import type { ChangeOperation, FeedRemoveReason, RemoveReason } from './entities/change.entity.js';
import { storedObject, type ScoredRow, type StoredObject, type WrittenChange } from './object-rows.js';
import { FEED_STATEMENTS, feedPageStatement, type FeedPage } from './object-statements.js';
import { versionsStatement, type VersionQuery } from './object-versions-statements.js';

/** A feed read that also numbers the collection's committed changes (ChangeSequencer.numberAndRead). */
export interface Numbering {
  manager: EntityManager;
  /** The numbering CTEs for the statement (collection $1). */
  ctes: string;
}

/**
 * A change as a page of the feed shows it to its reader, with the object's marking then (`tlp`, a rank);
 * `operation` null: a record the key may not see (nothing else of it read).
 */
export interface SeenChange {
  operation: ChangeOperation | null;
  object: StoredObject | null;
  reason: FeedRemoveReason | null;
  tlp: number | null;
}

/** What narrows a feed page (feedPageStatement's `narrowing`): its SQL, given the placeholders of its parameters. */
interface Narrowing {
  parameterNames: PolicyParameter[];
  values: Record<PolicyParameter, unknown>;
  sql: ($: Partial<Record<PolicyParameter, string>>) => string;
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
   * Each row with its score at the policy's `scoreAt` (the statement's own parameter, so the policy's is not bound twice).
   * Its statement and why its plan holds: FEED_PAGES in object-statements.ts.
   */
  listPage(policy: ReadPolicy, collectionId: number, afterId: number, limit: number, numbering?: Numbering) {
    const narrowing: Narrowing = {
      parameterNames: policy.parameterNames.filter((name) => name !== 'scoreAt'),
      values: policy.values(),
      sql: ($) => policy.conditions('intel_object', $),
    };
    return this.withFeedBounds<ScoredRow>('listPage', collectionId, afterId, limit, numbering, narrowing);
  }

  /**
   * Changes after `afterSeq` with the feed's bounds (so pruning cannot interleave); `position` is the seq.
   * Under a ceiling below RED (extensions §19) each record as the key may see it (`SeenChange`): the rows are
   * the next records by position all the same, so the caller's cursor moves past those it may not see. A
   * key that may see every marking runs the statement it ran before markings.
   */
  changesAfter(policy: ReadPolicy, collectionId: number, afterSeq: number, limit: number) {
    const narrowing: Narrowing = { parameterNames: policy.recordParameterNames, values: policy.values(), sql: ($) => policy.ceilingSql($) ?? '' };
    return this.withFeedBounds<SeenChange>('changesAfter', collectionId, afterSeq, limit, undefined, narrowing);
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
    numbering: Numbering | undefined,
    /** The read policy's part of the page: the listing's conditions, the feed's ceiling; parameters after the feed's. */
    narrowing: Narrowing,
  ): Promise<{ lastSeq: number; prunedSeq: number; pending: boolean; rows: (Row & SizedRow & { position: string })[] }> {
    const runner = numbering?.manager ?? this.dataSource;
    // The listing's own parameters end with `scoreAt` (its rows' scores); the change feed's, with the byte cap.
    const { listPage, changesAfter } = FEED_STATEMENTS.parameters;
    const p = (page === 'listPage' ? listPage : changesAfter).with(narrowing.parameterNames);
    const sql = narrowing.sql(p.$);
    const rows: ({ lastSeq: string; prunedSeq: string; pending: boolean; position: string | null } & Row & SizedRow)[] = await runner.query(
      numbering || sql ? feedPageStatement(page, numbering?.ctes, sql) : FEED_STATEMENTS[page],
      p.values({ collectionId, after, limit, maxBytes: this.config.pageMaxBytes, ...narrowing.values }),
    );
    return {
      lastSeq: Number(rows[0].lastSeq),
      prunedSeq: Number(rows[0].prunedSeq),
      pending: rows[0].pending,
      rows: rows.filter((row): row is typeof row & { position: string } => row.position !== null),
    };
  }
}
