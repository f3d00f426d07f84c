import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { waitSecondsOf } from '../common/http/long-poll.js';
import { PageResult, pageRequestOf } from '../common/pagination/page.js';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { type CollectionRecord, CollectionsService } from './collections.service.js';
import { DomainEvents } from '../common/events/domain-events.js';
import { InvalidationBus } from '../database/invalidation-bus.js';
import { LongPoll } from '../database/long-poll.js';
import type { ChangesQueryDto, ObjectChangeView } from './dto/object.dto.js';
import { ObjectsRepository, storedObject, type WrittenChange } from './objects.repository.js';
import { ObjectErrors } from './objects.errors.js';

/** A feed position: collection id and the sequence number of the last change already delivered. */
interface ChangesCursor {
  c: number;
  s: number;
}

function isChangesCursor(value: unknown): value is ChangesCursor {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { c, s, ...rest } = value as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    Number.isSafeInteger(c) &&
    (c as number) >= 1 &&
    Number.isSafeInteger(s) &&
    (s as number) >= 0
  );
}

export function encodeChangesCursor(collectionId: number, seq: number): string {
  return encodeCursor({ c: collectionId, s: seq } satisfies ChangesCursor);
}

/**
 * The change feed and its retention.
 *
 * Gap-free in commit order: every write takes its sequence number with an UPDATE of the collection row
 * in the same transaction as the object and its change record (ObjectsRepository, NEXT_SEQ). That row
 * lock is held until commit, so the writer of change N+1 cannot even read the counter before change N is
 * committed and visible: sequence order is commit order, and a reader that sees N+1 already sees every
 * change below it. A cursor is "the last sequence number delivered", so a follower can never skip a
 * change that commits later. Numbers are increasing, not necessarily dense (a lost delete race leaves
 * one unused), which no reader relies on. The price is that writers of one collection serialise on the
 * lock, each for one short statement or transaction; writers of different collections do not meet.
 */
/** A collection as announcements need it. */
type Announced = Pick<CollectionRecord, 'id' | 'name'>;

const OBJECT_EVENTS = ['intel.object.added', 'intel.object.updated', 'intel.object.removed'] as const;

/** Oldest expired change records removed per pruning statement. */
const PRUNE_BATCH = 10_000;

@Injectable()
export class ChangesService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ChangesService.name);
  private stopPruning?: () => void;
  /** Followers waiting for a change, by collection id. */
  private readonly feedSignals: LongPoll;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: ObjectsRepository,
    private readonly collections: CollectionsService,
    private readonly events: DomainEvents,
    bus: InvalidationBus,
  ) {
    this.feedSignals = new LongPoll(bus, 'feed');
  }

  onModuleInit(): void {
    this.stopPruning = schedulePeriodicJob('ChangesPruning', this.config.jobIntervalSeconds, () => this.prune());
  }

  onModuleDestroy(): void {
    this.stopPruning?.();
  }

  /**
   * wire-contract §3.2: a next link after the last change on every non-empty page, none on an empty one.
   * With `wait`, an empty page is held until a change of the collection commits on any instance.
   */
  async page(collectionName: string, query: ChangesQueryDto, gone?: AbortSignal): Promise<PageResult<ObjectChangeView>> {
    const page = pageRequestOf(query);
    const collection = await this.collections.findByName(collectionName);
    if (page.cursor === undefined) throw ObjectErrors.cursorRequired();
    const cursor = decodeCursor(page.cursor, isChangesCursor);
    if (cursor.c !== collection.id) throw ObjectErrors.foreignCursor();
    const options = { waitSeconds: waitSecondsOf(query.wait), gone, ready: (items: unknown[]) => items.length > 0 };
    const rows = await this.feedSignals.poll(String(collection.id), options, async () => {
      const { lastSeq, prunedSeq, rows } = await this.repository.changesAfter(collection.id, cursor.s, page.limit);
      // Never issued: positions only ever come from a committed last_seq.
      if (cursor.s > lastSeq) throw ObjectErrors.unknownCursor();
      if (cursor.s < prunedSeq) throw ObjectErrors.cursorOutOfRange();
      return rows;
    });
    // The stored jsonb orders its keys by length; the view keeps the ObjectView order (type, keys, context).
    const items = rows.map(({ operation, object, reason }) => ({
      operation,
      object: storedObject(object),
      ...(reason !== null && { reason }),
    }));
    return new PageResult(items, (index) => encodeChangesCursor(collection.id, Number(rows[index].position)), rows.length > 0);
  }

  /**
   * After the commit of change records of the collection (and only then), with what ObjectsRepository
   * wrote: wakes its long-polling followers on every instance and emits the domain events. Every writer
   * of change records calls it (or `announceRecorded`).
   */
  announce(collection: Announced, changes: WrittenChange[]): void {
    if (changes.length === 0) return;
    this.feedSignals.signal(String(collection.id));
    for (const change of changes) this.emit(collection.name, change);
  }

  /**
   * `announce` for a write that does not hold its changes in hand (a batch): the `count` records up to
   * sequence number `lastSeq`. They are read back only when someone listens to object events, after
   * the response, and a failure to read them is only logged.
   */
  announceRecorded(collection: Announced, count: number, lastSeq: number): void {
    if (count === 0) return;
    this.feedSignals.signal(String(collection.id));
    if (!OBJECT_EVENTS.some((name) => this.events.has(name))) return;
    void this.repository
      .changesAfter(collection.id, lastSeq - count, count)
      .then(({ rows }) => {
        for (const { operation, object, reason } of rows) {
          this.emit(collection.name, { operation, object: storedObject(object), ...(reason !== null && { reason }) });
        }
      })
      .catch((error: unknown) => this.logger.error(`object events of a batch not delivered: ${String(error)}`));
  }

  private emit(collection: string, { operation, object, reason }: WrittenChange): void {
    if (operation === 'Add') this.events.emit('intel.object.added', { collection, object });
    else if (operation === 'Update') this.events.emit('intel.object.updated', { collection, object });
    else this.events.emit('intel.object.removed', { collection, object, reason: reason ?? 'Deleted' });
  }

  /** Removes change records older than CHANGES_RETENTION_DAYS; run by the periodic job, public for tests. */
  async prune(): Promise<void> {
    let total = 0;
    for (;;) {
      const removed = await this.repository.prune(this.config.changesRetentionDays, PRUNE_BATCH);
      if (removed === undefined) break; // another instance is pruning
      total += removed;
      if (removed === 0) break;
    }
    if (total > 0) this.logger.log(`pruned ${total} change records`);
  }
}
