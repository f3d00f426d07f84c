import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error.js';
import { normalizeKey, type ObjectKey } from '../../common/indicators/indicators.js';
import { keyId } from '../../formats/forms.js';
import { ObjectAddDto } from '../dto/object.dto.js';
import { AppValidationPipe } from '../../common/validation/validation.pipe.js';
import { WarninglistMatcherService } from '../../warninglists/warninglist-matcher.service.js';
import { ChangesService } from '../changes.service.js';
import type { RecordedIds } from '../change-records.js';
import { type CollectionRecord, CollectionsService } from '../collections.service.js';
import { ObjectsRepository, type WrittenChange } from '../objects.repository.js';
import { ObjectsService } from '../objects.service.js';
import { type BatchPlan, type ItemOutcome, planBatch, type PreparedItem } from './batch-plan.js';
import { parseBatch } from './batch-body.js';
import { type BatchItemView, type BatchQueryDto, type BatchReportView, RemoveItemDto } from './batch.dto.js';
import { BatchRepository } from './batch.repository.js';
import type { WriteOrigin } from '../write-origin.js';

/** The most items one write of the batch path takes, for the areas that feed it (TAXII envelopes). */
export { MAX_BATCH_ITEMS } from './batch-body.js';

/**
 * A source run's part in its write (extensions §13). `settle` runs inside the write's transaction, under the
 * collection's exclusive writer lock, once the items are checked: the run's own bookkeeping (its claims),
 * so that the run commits whole or not at all. It gets the indexes of the items that failed their checks and
 * returns the keys whose last source claim ended; those not natively claimed are removed (`Withdrawn`).
 * `dryRun` decides everything and rolls it all back.
 */
export interface RunSettlement {
  settle(manager: EntityManager, failed: ReadonlySet<number>): Promise<ObjectKey[]>;
  dryRun: boolean;
}

/** A run's write: the report of its items, and how many objects its ended claims removed. */
export interface RunWrite {
  report: BatchReportView;
  withdrawn: number;
}

/** Thrown inside the transaction of a dry run, to roll it back with its plan. */
class DryRun extends Error {
  constructor(readonly plan: BatchPlan) {
    super('dry run');
  }
}

/** Thrown inside the transaction of an atomic batch with a failed item, to roll it back. */
class AtomicRejection extends Error {
  constructor(readonly outcomes: ItemOutcome[]) {
    super('atomic batch rejected');
  }
}

function report(outcomes: ItemOutcome[]): BatchReportView {
  const count = (status: ItemOutcome['status']) => outcomes.filter((outcome) => outcome.status === status).length;
  const items = outcomes.map((outcome, index): BatchItemView => {
    if (outcome.status !== 'Failed') return { index, status: outcome.status };
    const { code, message, details } = outcome.error;
    return { index, status: 'Failed', error: details === undefined ? { code, message } : { code, message, details } };
  });
  return {
    added: count('Added'),
    updated: count('Updated'),
    unchanged: count('Unchanged'),
    removed: count('Removed'),
    failed: count('Failed'),
    items,
  };
}

/**
 * 422 for an atomic batch with a failed item, the report in `details`: nothing was applied, so every item
 * that did not fail is `NotApplied` and the counts are those of what happened (only `failed` is non-zero).
 */
function rejection(outcomes: ItemOutcome[]): ApiError {
  const held = outcomes.map((outcome): ItemOutcome => (outcome.status === 'Failed' ? outcome : { status: 'NotApplied' }));
  const failed = report(held);
  return new ApiError(
    'BatchRejected',
    `${failed.failed} of ${outcomes.length} items failed; nothing was applied (atomic batch)`,
    failed as unknown as Record<string, unknown>,
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `POST .../objects/batch`: every item passes exactly the checks of its single endpoint (the same body
 * validation, normalisation and schema check, before any lock), then the whole batch is decided and
 * written under the collection's exclusive writer lock, in one transaction, its change records in item order.
 */
@Injectable()
export class BatchService {
  /** The global pipe's rules, applied per item: an item is validated exactly as the body of a single request. */
  private readonly validation = new AppValidationPipe();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly collections: CollectionsService,
    private readonly objects: ObjectsService,
    private readonly objectsRepository: ObjectsRepository,
    private readonly repository: BatchRepository,
    private readonly changes: ChangesService,
    private readonly warninglists: WarninglistMatcherService,
  ) {}

  async apply(origin: WriteOrigin, collectionName: string, query: BatchQueryDto, body: unknown, contentType: string | undefined): Promise<BatchReportView> {
    const collection = await this.collections.findByName(collectionName);
    return this.applyTo(origin, collection, parseBatch(body, contentType), query.atomic === 'true');
  }

  /**
   * A batch of items already parsed (imports of other formats map their records to items), with exactly
   * the rules of `apply`, all or nothing when `atomic`.
   */
  async applyItems(origin: WriteOrigin, collectionName: string, rawItems: unknown[], atomic = false): Promise<BatchReportView> {
    return this.applyTo(origin, await this.collections.findByName(collectionName), rawItems, atomic);
  }

  /**
   * A source run's items (extensions §13), with exactly the rules of `apply`, and the withdrawals of the
   * claims it ended, in one transaction with its bookkeeping (RunSettlement). A withdrawal is a remove
   * item with reason `Withdrawn`, after the items; an object a native write added or updated keeps its
   * `api` claim and stays (BatchRepository.nativelyClaimed).
   */
  async applyRun(origin: WriteOrigin, collectionName: string, rawItems: unknown[], run: RunSettlement): Promise<RunWrite> {
    const outcomes = await this.applyTo(origin, await this.collections.findByName(collectionName), rawItems, false, run);
    const withdrawn = outcomes.slice(rawItems.length).filter((outcome) => outcome.status === 'Removed').length;
    return { report: report(outcomes.slice(0, rawItems.length)), withdrawn };
  }

  private async applyTo(origin: WriteOrigin, collection: CollectionRecord, rawItems: unknown[], atomic: boolean): Promise<BatchReportView>;
  private async applyTo(origin: WriteOrigin, collection: CollectionRecord, rawItems: unknown[], atomic: false, run: RunSettlement): Promise<ItemOutcome[]>;
  private async applyTo(
    origin: WriteOrigin,
    collection: CollectionRecord,
    rawItems: unknown[],
    atomic: boolean,
    run?: RunSettlement,
  ): Promise<BatchReportView | ItemOutcome[]> {
    const prepared: PreparedItem[] = [];
    for (const raw of rawItems) prepared.push(await this.prepare(collection, raw));
    // Adds with a key on a rejectOnIngest warninglist fail as items; the rest are written.
    const refusals = await this.warninglists.refusals(prepared.map((item) => (item.kind === 'add' ? item.object.keys : [])));
    const items = prepared.map((item, index): PreparedItem => (refusals[index] ? { kind: 'failed', error: refusals[index] } : item));
    if (atomic && items.some((item) => item.kind === 'failed')) {
      throw rejection(items.map((item) => (item.kind === 'failed' ? { status: 'Failed', error: item.error } : { status: 'NotApplied' })));
    }
    const keysOf = (of: PreparedItem[]) => of.flatMap((item): ObjectKey[] => (item.kind === 'add' ? item.object.keys : item.kind === 'remove' ? [item.key] : []));
    if (run === undefined && keysOf(items).length === 0) return report(planBatch(items, []).outcomes);

    let plan: BatchPlan;
    let expired: WrittenChange[] = [];
    let recorded: RecordedIds | null = null;
    try {
      plan = await this.dataSource.transaction(async (manager) => {
        // The lock before the read: every decision below is made on the state no other writer can change
        // until this transaction commits (see ObjectsRepository.lockCollection).
        await this.objectsRepository.lockCollection(manager, collection.id);
        const all = run === undefined ? items : [...items, ...(await this.withdrawals(manager, collection.id, items, run))];
        // Expired owners are gone: removed (Expired) first, so their keys are free for the items.
        const owners = await this.repository.owners(manager, collection.id, keysOf(all));
        const decided = planBatch(all, owners.filter((owner) => !owner.expired));
        if (atomic && decided.outcomes.some((outcome) => outcome.status === 'Failed')) throw new AtomicRejection(decided.outcomes);
        if (run?.dryRun) throw new DryRun(decided);
        expired = await this.objects.expireHits(manager, origin, collection.id, owners);
        recorded = await this.repository.apply(manager, origin, collection.id, decided);
        return decided;
      });
    } catch (error) {
      if (error instanceof AtomicRejection) throw rejection(error.outcomes);
      if (error instanceof DryRun) return error.plan.outcomes;
      throw error;
    }
    this.changes.announce(collection, expired);
    if (recorded !== null) this.changes.announceRecorded(collection, recorded);
    return run === undefined ? report(plan.outcomes) : plan.outcomes;
  }

  /** The run's bookkeeping, then a `Withdrawn` remove for each key whose last claim it ended, unless natively claimed. */
  private async withdrawals(manager: EntityManager, collectionId: number, items: PreparedItem[], run: RunSettlement): Promise<PreparedItem[]> {
    const failed = new Set(items.flatMap((item, index) => (item.kind === 'failed' ? [index] : [])));
    const ended = await run.settle(manager, failed);
    const kept = new Set((await this.repository.nativelyClaimed(manager, collectionId, ended)).map(keyId));
    return ended.filter((key) => !kept.has(keyId(key))).map((key): PreparedItem => ({ kind: 'remove', key, reason: 'Withdrawn' }));
  }

  /** The checks of the single endpoints that need no lock; an ApiError becomes the item's failure. */
  private async prepare(collection: CollectionRecord, raw: unknown): Promise<PreparedItem> {
    try {
      if (isPlainObject(raw) && 'remove' in raw) {
        const item = (await this.validation.transform(raw, { type: 'body', metatype: RemoveItemDto })) as RemoveItemDto;
        return { kind: 'remove', key: normalizeKey({ type: item.remove.type, value: item.remove.value }) };
      }
      const form = (await this.validation.transform(raw, { type: 'body', metatype: ObjectAddDto })) as ObjectAddDto;
      return { kind: 'add', object: await this.objects.prepare(collection, form) };
    } catch (error) {
      if (error instanceof ApiError) return { kind: 'failed', error };
      throw error;
    }
  }
}
