import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error.js';
import { normalizeKey, type ObjectKey } from '../../common/indicators/indicators.js';
import type { TlpRank } from '../../common/markings/tlp.js';
import { AppValidationPipe } from '../../common/validation/validation.pipe.js';
import { keyId, type ObjectForm } from '../../formats/forms.js';
import { WarninglistMatcherService } from '../../warninglists/warninglist-matcher.service.js';
import type { RecordedIds } from '../change-records.js';
import { ChangesService } from '../changes.service.js';
import { CollectionsService, type CollectionRecord } from '../collections.service.js';
import { ObjectAddDto } from '../dto/object.dto.js';
import type { WrittenChange } from '../object-rows.js';
import { tlpParameter, type PreparedObject } from '../object-rules.js';
import { ObjectsRepository } from '../objects.repository.js';
import { ObjectsService } from '../objects.service.js';
import type { WriteOrigin } from '../write-origin.js';
import { parseBatch } from './batch-body.js';
import { planBatch, type BatchPlan, type ItemOutcome, type PreparedItem } from './batch-plan.js';
import { RemoveItemDto, type BatchItemView, type BatchQueryDto, type BatchReportView } from './batch.dto.js';
import { BatchRepository } from './batch.repository.js';
import { RunStage } from './run-stage.js';

/** The most items one write of the batch path takes, for the areas that feed it (TAXII envelopes). */
export { MAX_BATCH_ITEMS } from './batch-body.js';

/**
 * A form of a source's body with the line it came from (its rejection names it), the marking its claim takes
 * and the credibility its record gave itself (an Admiralty value; null: its source's, extensions §18).
 */
export interface RunForm {
  line: number;
  form: ObjectForm;
  tlp: TlpRank;
  credibility: number | null;
}

/**
 * What the run's settlement gets: the staged body (null when there is none: a 304, a deletion), whether it
 * repeats the previous one (its digest is `previousDigest`: then no item is written), and its tables.
 */
export interface StagedRun {
  body: { digest: string; forms: number; repeat: boolean } | null;
  /** A relation `(key_type, value, tlp, credibility)`: the distinct keys of the body's items that passed their checks, with their marking and credibility. */
  seenKeys: string;
  /** A table `(key_type, value)` the settlement fills with the keys whose last source claim in the collection it ended. */
  endedKeys: string;
  /**
   * A table `(key_type, value)` the settlement fills with the keys whose claims it changed in a way that may
   * move an object's marking (a claim ended, marked otherwise, or new above TLP:CLEAR): the objects of those
   * keys that the run does not rewrite are re-marked after its writes (RunStage.remark).
   */
  remarkedKeys: string;
}

/**
 * A source run's part in its write (extensions §13). `forms` are staged as they arrive (a failure they
 * throw rolls everything back). `settle` runs inside the write's transaction, under the collection's
 * exclusive writer lock, once the body is staged: the run's bookkeeping (its claims, the ended ones into
 * `endedKeys`, the keys whose markings may move into `remarkedKeys`), so that the run commits whole or not
 * at all; the body's items are written unless it is a repeat, then the ended keys that no native write claims
 * are removed (`Withdrawn`), then the other objects of the keys noted are re-marked. `close` is the
 * transaction's last statement. `rejected` hears of each item that fails its checks, in order. `dryRun`
 * decides everything and rolls it all back.
 */
export interface RunSettlement {
  forms: AsyncIterable<RunForm> | null;
  /** The digest of the source's last body applied, or null (none, or a dry run: never a repeat). */
  previousDigest: string | null;
  settle(manager: EntityManager, staged: StagedRun): Promise<void>;
  close?(manager: EntityManager): Promise<void>;
  rejected?(line: number, value: string, reason: string): void;
  dryRun: boolean;
  /**
   * The source claims nothing yet (its first run): its items are written without the set difference
   * against the collection, which would find few of them unchanged; the batch path finds those itself.
   */
  fresh?: boolean;
}

/** A run's write: what its items did, and how many objects its ended claims removed. */
export interface RunWrite {
  added: number;
  updated: number;
  unchanged: number;
  failed: number;
  withdrawn: number;
}

/** Items of a run staged, read back and written per statement: bounded memory, statements of a batch's size. */
const RUN_CHUNK = 5_000;

/** Items of a run checked between two turns of the event loop. */
const CHECK_SLICE = 250;

/** Up to `size` items of `source` at a time. */
async function* chunksOf<T>(source: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let chunk: T[] = [];
  for await (const item of source) {
    chunk.push(item);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * The digest of a form as parsed: the same forms give the same body digest whatever their order. A record's
 * own credibility counts (a body that changes only a credibility is no repeat); without one, the digest is
 * the one stored before credibilities existed.
 */
const formDigest = (form: ObjectForm, credibility: number | null) =>
  createHash('sha256')
    .update(JSON.stringify([form.type, form.keys.map(keyId), form.context, form.expiresAt ?? null, ...(credibility === null ? [] : [credibility])]))
    .digest();

/**
 * A statement of a run's transaction sent ahead of its use (pg queues it on the connection): its failure is
 * seen where it is awaited, and a failure elsewhere meanwhile rolls the transaction back anyway.
 */
function ahead<T>(statement: Promise<T>): Promise<T> {
  statement.catch(() => undefined);
  return statement;
}

/** Thrown inside a run's transaction to roll a dry run back. */
class DryRun extends Error {
  constructor() {
    super('dry run');
  }
}

/** Thrown inside the transaction of an atomic batch with a failed item, to roll it back. */
class AtomicRejection extends Error {
  constructor(readonly outcomes: ItemOutcome[]) {
    super('atomic batch rejected');
  }
}

/** How `applyItems` writes its items. */
export interface ItemsOptions {
  /** All or nothing: any failed item → nothing is applied, 422 `BatchRejected` (`?atomic=true`). */
  atomic?: boolean;
  /**
   * The marking of the api claim each item makes (extensions §19), as a rank: one for every item (the
   * request's `tlp`), or one per item by its index in `rawItems` (a TAXII write: each STIX object's
   * `object_marking_refs`, `rankOfMarkingRefs`). An item without one (undefined, or no `tlp` at all) takes
   * the collection's `defaultTLP`.
   */
  tlp?: TlpRank | readonly (TlpRank | undefined)[];
}

/** What one write of items did: its plan, the expired owners it removed first, and its records' ids. */
interface Written {
  plan: BatchPlan;
  expired: WrittenChange[];
  recorded: RecordedIds | null;
}

const keysOf = (items: PreparedItem[]) =>
  items.flatMap((item): ObjectKey[] => (item.kind === 'add' ? item.object.keys : item.kind === 'remove' ? [item.key] : []));

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
    const tlp = tlpParameter(query.tlp);
    const collection = await this.collections.findByName(collectionName);
    return this.applyTo(origin, collection, parseBatch(body, contentType), { atomic: query.atomic === 'true', tlp });
  }

  /**
   * A batch of items already parsed (imports of other formats map their records to items), with exactly
   * the rules of `apply` (ItemsOptions: all or nothing, the items' markings).
   */
  async applyItems(origin: WriteOrigin, collectionName: string, rawItems: unknown[], options: ItemsOptions = {}): Promise<BatchReportView> {
    return this.applyTo(origin, await this.collections.findByName(collectionName), rawItems, options);
  }

  /**
   * A source run (extensions §13) in one transaction: its body staged chunk by chunk with exactly the checks
   * of `apply` (RunStage), then under the collection's exclusive writer lock its bookkeeping (RunSettlement),
   * the items that may change something written through the batch path in chunks, in body order (each
   * object marked by its claims as settled, extensions §19), a `Withdrawn` remove for each key whose last
   * claim it ended, unless natively claimed (the `api` claim), and the re-mark of the objects it did not
   * rewrite whose claims it changed (RunStage.remark). Memory stays bounded whatever the body's size: only a
   * chunk is in hand at a time.
   */
  async applyRun(origin: WriteOrigin, collectionName: string, run: RunSettlement): Promise<RunWrite> {
    const collection = await this.collections.findByName(collectionName);
    const write: RunWrite = { added: 0, updated: 0, unchanged: 0, failed: 0, withdrawn: 0 };
    const expired: WrittenChange[] = [];
    let recorded: RecordedIds | null = null;
    const record = (ids: RecordedIds | null) => {
      if (ids !== null) recorded = { firstId: recorded?.firstId ?? ids.firstId, lastId: ids.lastId };
    };
    const written = (chunk: Written) => {
      expired.push(...chunk.expired);
      record(chunk.recorded);
    };
    try {
      await this.dataSource.transaction(async (manager) => {
        const stage = await RunStage.open(manager);
        let body: StagedRun['body'] = null;
        if (run.forms !== null) {
          // Staged and checked before the lock, as a batch checks its items before it: native writes go on
          // meanwhile. Every item is checked as it arrives, a repeat of the last body too: checking only once
          // the body's digest says it is not a repeat meant reading every item back and rewriting its staged
          // row, which cost a changed body more (bench row 20c) than the checks cost a repeat (row 20b).
          // A chunk's INSERT runs while the next chunk is parsed and checked (PostgreSQL and the service on
          // different cores): one statement in flight at a time, awaited before the next and after the last.
          let staging: Promise<void> = Promise.resolve();
          for await (const chunk of chunksOf(run.forms, RUN_CHUNK)) {
            const forms = chunk.map(({ line, form, tlp, credibility }) => ({ line, digest: formDigest(form, credibility), tlp, credibility }));
            const objects = await this.checked(collection, chunk, write, run);
            await staging;
            staging = ahead(stage.add(forms, objects));
          }
          await staging;
          const digest = await stage.digest();
          const repeat = digest === run.previousDigest;
          body = { digest, forms: stage.size, repeat };
        }
        await this.objectsRepository.lockCollection(manager, collection.id);
        await run.settle(manager, { body, ...stage.tables });
        if (body !== null && !body.repeat) {
          if (!run.fresh) write.unchanged += (await stage.pending(collection.id)).unchanged;
          for (let after = -1; ;) {
            const staged = await stage.nextPending(after, RUN_CHUNK);
            if (staged.length === 0) break;
            after = staged[staged.length - 1].n;
            const chunk = await this.writeItems(
              manager,
              origin,
              collection,
              staged.map(({ object }): PreparedItem => ({ kind: 'add', object })),
            );
            chunk.plan.outcomes.forEach((outcome, index) => {
              if (outcome.status === 'Added') write.added += 1;
              else if (outcome.status === 'Updated') write.updated += 1;
              else if (outcome.status === 'Unchanged') write.unchanged += 1;
              else if (outcome.status === 'Failed') {
                write.failed += 1;
                run.rejected?.(staged[index].line, staged[index].object.keys.map((key) => key.value).join(' '), outcome.error.message);
              }
            });
            written(chunk);
          }
        }
        for (let after: ObjectKey | null = null; ;) {
          const keys = await stage.nextWithdrawals(collection.id, after, RUN_CHUNK);
          if (keys.length === 0) break;
          after = keys[keys.length - 1];
          const chunk = await this.writeItems(
            manager,
            origin,
            collection,
            keys.map((key): PreparedItem => ({ kind: 'remove', key, reason: 'Withdrawn' })),
          );
          write.withdrawn += chunk.plan.outcomes.filter((outcome) => outcome.status === 'Removed').length;
          written(chunk);
        }
        record(await stage.remark(collection, origin));
        await run.close?.(manager);
        if (run.dryRun) throw new DryRun();
      });
    } catch (error) {
      if (error instanceof DryRun) return write;
      throw error;
    }
    this.changes.announce(collection, expired);
    if (recorded !== null) this.changes.announceRecorded(collection, recorded);
    return write;
  }

  private async applyTo(
    origin: WriteOrigin,
    collection: CollectionRecord,
    rawItems: unknown[],
    { atomic = false, tlp }: ItemsOptions,
  ): Promise<BatchReportView> {
    const items = await this.prepareAll(collection, rawItems, (index) => (typeof tlp === 'number' ? tlp : tlp?.[index]) ?? collection.defaultTlp);
    if (atomic && items.some((item) => item.kind === 'failed')) {
      throw rejection(items.map((item) => (item.kind === 'failed' ? { status: 'Failed', error: item.error } : { status: 'NotApplied' })));
    }
    if (keysOf(items).length === 0) return report(planBatch(items, [], new Map()).outcomes);

    let written: Written;
    try {
      written = await this.dataSource.transaction(async (manager) => {
        // The lock before the read: every decision below is made on the state no other writer can change
        // until this transaction commits (see ObjectsRepository.lockCollection).
        await this.objectsRepository.lockCollection(manager, collection.id);
        return this.writeItems(manager, origin, collection, items, atomic);
      });
    } catch (error) {
      if (error instanceof AtomicRejection) throw rejection(error.outcomes);
      throw error;
    }
    this.changes.announce(collection, written.expired);
    if (written.recorded !== null) this.changes.announceRecorded(collection, written.recorded);
    return report(written.plan.outcomes);
  }

  /**
   * A run's forms through the checks of `apply`: their objects (null: failed, counted and reported to the
   * run). By slices, each after a turn of the event loop: the checks resolve without I/O, and a chunk of
   * them at once would hold up every request of the instance (and its connections' set-up) meanwhile.
   */
  private async checked(collection: CollectionRecord, forms: RunForm[], write: RunWrite, run: RunSettlement): Promise<(PreparedObject | null)[]> {
    const items: PreparedItem[] = [];
    for (let start = 0; start < forms.length; start += CHECK_SLICE) {
      await setImmediate();
      items.push(
        ...(await this.prepareAll(
          collection,
          forms.slice(start, start + CHECK_SLICE).map(({ form }) => form),
          // A source's items make no api claim: no marking of theirs (PreparedObject.tlp).
          () => null,
        )),
      );
    }
    return items.map((item, index) => {
      if (item.kind === 'add') return item.object;
      if (item.kind === 'failed') {
        write.failed += 1;
        run.rejected?.(forms[index].line, forms[index].form.keys.map((key) => key.value).join(' '), item.error.message);
      }
      return null;
    });
  }

  /**
   * Every item through the checks of its single endpoint, with its marking (`markingAt` its index);
   * adds with a key on a rejectOnIngest warninglist fail as items.
   */
  private async prepareAll(collection: CollectionRecord, rawItems: unknown[], markingAt: (index: number) => TlpRank | null): Promise<PreparedItem[]> {
    const prepared: PreparedItem[] = [];
    for (const [index, raw] of rawItems.entries()) prepared.push(await this.prepare(collection, raw, markingAt(index)));
    const refusals = await this.warninglists.refusals(prepared.map((item) => (item.kind === 'add' ? item.object.keys : [])));
    return prepared.map((item, index): PreparedItem => (refusals[index] ? { kind: 'failed', error: refusals[index] } : item));
  }

  /**
   * Decides and writes items; the caller holds the collection's exclusive writer lock. Expired owners are
   * removed (Expired) first, so their keys are free for the items. An object an add writes takes the marking
   * of the source claims on its keys (the items' and its owner's): read only when there is an add.
   */
  private async writeItems(manager: EntityManager, origin: WriteOrigin, collection: CollectionRecord, items: PreparedItem[], atomic = false): Promise<Written> {
    const owners = await this.repository.owners(manager, collection.id, keysOf(items));
    const live = owners.filter((owner) => !owner.expired);
    const claims = items.some((item) => item.kind === 'add')
      ? await this.repository.claimMarkings(manager, collection.name, [...keysOf(items), ...live.flatMap((owner) => owner.keys)])
      : new Map<string, TlpRank>();
    const plan = planBatch(items, live, claims, origin.reliability);
    if (atomic && plan.outcomes.some((outcome) => outcome.status === 'Failed')) throw new AtomicRejection(plan.outcomes);
    const expired = await this.objects.expireHits(manager, origin, collection.id, owners);
    const recorded = await this.repository.apply(manager, origin, collection.id, plan);
    if (plan.refreshes.length > 0 && origin.reliability !== null)
      await this.objectsRepository.refreshClaims(manager, collection.id, plan.refreshes, origin.reliability);
    return { plan, expired, recorded };
  }

  /** The checks of the single endpoints that need no lock; an ApiError becomes the item's failure. */
  private async prepare(collection: CollectionRecord, raw: unknown, tlp: TlpRank | null): Promise<PreparedItem> {
    try {
      if (isPlainObject(raw) && 'remove' in raw) {
        const item = (await this.validation.transform(raw, { type: 'body', metatype: RemoveItemDto })) as RemoveItemDto;
        return { kind: 'remove', key: normalizeKey({ type: item.remove.type, value: item.remove.value }) };
      }
      const form = (await this.validation.transform(raw, { type: 'body', metatype: ObjectAddDto })) as ObjectAddDto;
      return { kind: 'add', object: await this.objects.prepare(collection, form, tlp) };
    } catch (error) {
      if (error instanceof ApiError) return { kind: 'failed', error };
      throw error;
    }
  }
}
