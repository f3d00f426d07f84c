import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import type { ChildNameResolver } from '../common/guard/access.decorators.js';
import type { Principal } from '../common/guard/access.js';
import { afterIdCursor, afterIdFromCursor, decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageQueryDto, type PageResult } from '../common/pagination/page.js';
import { assertTagMatches, TaggedResult } from '../common/tags/tag.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { BatchService } from '../intel/batch/batch.service.js';
import { CollectionsService } from '../intel/collections.service.js';
import { sourceOrigin, type WriteOrigin } from '../intel/write-origin.js';
import type { RunView, SourceClaimView, SourceRegistrationView, SourceView } from './dto/source.dto.js';
import { SourceClaimsRepository } from './source-claims.repository.js';
import { OutboundPolicy } from './source-fetch.js';
import { parseSourceForm, type SourceForm } from './source-form.js';
import { SourceRowsRepository, type SourceRow } from './source-rows.repository.js';
import { SourceRunsRepository, type RunRow } from './source-runs.repository.js';
import { SourcesErrors } from './sources.errors.js';

/** The id of a source not stored yet (ids start at 1): a dry run of its form has no claims to settle. */
export const DRAFT_SOURCE_ID = 0;

/** The members a source keeps in columns of their own, which its form and its view both carry as they are. */
function columnsOf(row: SourceRow): Omit<SourceForm, 'settings' | 'secrets'> {
  return { name: row.name, collection: row.collection, kind: row.kind, enabled: row.enabled, intervalSeconds: row.intervalSeconds };
}

/** The stored source as the form it was made from (secrets included: only for a PATCH to start from). */
export function formOf(row: SourceRow): SourceForm {
  return { ...columnsOf(row), settings: row.settings, secrets: row.secrets };
}

/** The view: the settings with header names only and the username only (secrets are write-only), and the state. */
export function sourceView(row: SourceRow): SourceView {
  const { headerNames, username, ...settings } = row.settings;
  return {
    ...columnsOf(row),
    ...settings,
    headers: headerNames,
    ...(username !== undefined && { basicAuth: { username } }),
    state: !row.enabled ? 'disabled' : row.consecutiveFailures > 0 ? 'failing' : 'ok',
    lastRunAt: row.lastRunAt,
    lastSuccessAt: row.lastSuccessAt,
    nextRunAt: row.enabled ? row.nextRunAt : null,
    consecutiveFailures: row.consecutiveFailures,
    claims: row.claims,
  };
}

function runView(row: RunRow): RunView {
  return {
    runID: row.runID,
    trigger: row.trigger,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    outcome: row.outcome,
    httpStatus: row.httpStatus,
    bytes: row.bytes,
    items: row.items,
    added: row.added,
    updated: row.updated,
    withdrawn: row.withdrawn,
    rejected: row.rejected,
    rejections: row.rejections,
    error: row.error,
  };
}

const isRunCursor = (value: unknown): value is { t: string; i: string } =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { t: unknown }).t === 'string' &&
  typeof (value as { i: unknown }).i === 'string' &&
  !Number.isNaN(Date.parse((value as { t: string }).t)) &&
  /^[0-9a-f-]{36}$/.test((value as { i: string }).i);

const isClaimCursor = (value: unknown): value is { k: string; v: string } =>
  typeof value === 'object' && value !== null && typeof (value as { k: unknown }).k === 'string' && typeof (value as { v: unknown }).v === 'string';

/**
 * `/intel/sources` (extensions §13): the resource, its run log and its claims. Runs are SourceRunsService's.
 * Also the resolver of the read routes' access rule: a source is read with `Read` on its collection.
 */
@Injectable()
export class SourcesService implements ChildNameResolver {
  readonly policy: OutboundPolicy;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: SourceRowsRepository,
    private readonly runLog: SourceRunsRepository,
    private readonly claimRows: SourceClaimsRepository,
    private readonly collections: CollectionsService,
    private readonly batch: BatchService,
  ) {
    this.policy = new OutboundPolicy(config.sources);
  }

  async nameOf(sourceName: string): Promise<string | undefined> {
    return (await this.repository.locate(sourceName))?.collection;
  }

  async create(body: unknown): Promise<SourceRegistrationView> {
    const form = parseSourceForm(body, (address) => this.policy.denied(address));
    await this.assertCollection(form.collection);
    await this.repository.insert(form);
    return { name: form.name };
  }

  /**
   * The source a form would make, for a dry run before it is stored (the console's "Test"): a new source
   * (checked as `create` checks it, no claims yet), or `name` changed by the form (its claims, as `update`
   * would start from them). Nothing is stored.
   */
  async draft(body: unknown, name?: string): Promise<SourceRow> {
    const denied = (address: string) => this.policy.denied(address);
    if (name !== undefined) {
      const row = await this.find(name);
      return { ...row, ...parseSourceForm(body, denied, formOf(row)) };
    }
    const form = parseSourceForm(body, denied);
    await this.assertCollection(form.collection);
    return {
      ...form,
      id: DRAFT_SOURCE_ID,
      version: 0,
      nextRunAt: null,
      leaseRunId: null,
      lastRunAt: null,
      lastSuccessAt: null,
      consecutiveFailures: 0,
      etag: null,
      lastModified: null,
      bodyDigest: null,
      claims: 0,
    };
  }

  async find(name: string): Promise<SourceRow> {
    const row = await this.repository.find(name);
    if (!row) throw SourcesErrors.notFound(name);
    return row;
  }

  /** 404 for an unknown source; its id and collection only (no count of its claims). */
  private async located(name: string): Promise<{ id: number; collection: string }> {
    const row = await this.repository.locate(name);
    if (!row) throw SourcesErrors.notFound(name);
    return row;
  }

  async view(name: string): Promise<TaggedResult<SourceView>> {
    const row = await this.find(name);
    return new TaggedResult(sourceView(row), row.version);
  }

  /** Only the sources of collections the key may read. */
  async list(principal: Principal, query: PageQueryDto): Promise<PageResult<SourceView>> {
    const page = pageRequestOf(query);
    const readable = (await this.collections.feedCollections(principal)).filter((c) => c.canRead).map((c) => c.name);
    const rows = await this.repository.list(afterIdFromCursor(page.cursor), page.limit + 1, readable);
    return keysetPage(rows, page.limit, (row) => afterIdCursor(row.id), sourceView);
  }

  /** The stored form, changed by the members sent (a secret left out is kept, `null` clears it), under If-Match. */
  async update(name: string, ifMatch: string, body: unknown): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const row = await this.repository.find(name, manager, true);
      if (!row) throw SourcesErrors.notFound(name);
      assertTagMatches(ifMatch, row.version);
      const form = parseSourceForm(body, (address) => this.policy.denied(address), formOf(row));
      await this.repository.update(manager, row, form);
    });
  }

  /**
   * Deletes the source; its claims end in the same transaction, so an object it alone claimed is removed
   * (`Withdrawn`) before the answer. The withdrawals are the source's (extensions §14: via `source`, its
   * name), made by the request: they carry the key and request id of `origin`.
   */
  async delete(origin: WriteOrigin, name: string): Promise<void> {
    const row = await this.find(name);
    const withdrawals = sourceOrigin(name, origin.requestID, origin.keyID);
    let found = true;
    await this.batch.applyRun(withdrawals, row.collection, {
      forms: null,
      previousDigest: null,
      dryRun: false,
      settle: async (manager, staged) => {
        const locked = await this.repository.find(name, manager, true);
        if (!locked) {
          found = false;
          return;
        }
        await this.claimRows.endAll(manager, locked, { ended: staged.endedKeys, remarked: staged.remarkedKeys });
        await this.repository.delete(manager, locked);
      },
    });
    if (!found) throw SourcesErrors.notFound(name);
  }

  async runs(name: string, query: PageQueryDto): Promise<PageResult<RunView>> {
    const row = await this.located(name);
    const page = pageRequestOf(query);
    const after = page.cursor === undefined ? null : decodeCursor(page.cursor, isRunCursor);
    const rows = await this.runLog.runs(row.id, after && { startedAt: after.t, id: after.i }, page.limit + 1);
    return keysetPage(rows, page.limit, (run) => encodeCursor({ t: run.sortAt, i: run.runID }), runView);
  }

  async claims(name: string, query: PageQueryDto): Promise<PageResult<SourceClaimView>> {
    const row = await this.located(name);
    const page = pageRequestOf(query);
    const after = page.cursor === undefined ? null : decodeCursor(page.cursor, isClaimCursor);
    const rows = await this.claimRows.claims(row.id, after && { type: after.k, value: after.v }, page.limit + 1);
    return keysetPage(
      rows,
      page.limit,
      (claim) => encodeCursor({ k: claim.type, v: claim.value }),
      (claim) => ({ ...claim }),
    );
  }

  /** 422 CollectionNotFound for a form naming no collection. */
  private async assertCollection(name: string): Promise<void> {
    try {
      await this.collections.findByName(name);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'NotFound') throw SourcesErrors.collectionNotFound(name);
      throw error;
    }
  }
}
