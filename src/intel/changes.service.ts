import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DomainEvents } from '../common/events/domain-events.js';
import { waitSecondsOf } from '../common/http/long-poll.js';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { RED, type TlpRank } from '../common/markings/tlp.js';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { pageRequestOf, PageResult } from '../common/pagination/page.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { InvalidationBus } from '../database/invalidation-bus.js';
import { LongPoll } from '../database/long-poll.js';
import type { ReadPolicy } from '../read-policy/read-policy.js';
import type { RecordedIds } from './change-records.js';
import { ChangeRetentionRepository } from './change-retention.repository.js';
import { ChangeSequencer, FEED_TOPIC } from './change-sequencer.js';
import { CollectionsService, type CollectionRecord } from './collections.service.js';
import type { ChangesQueryDto, ObjectChangeView } from './dto/object.dto.js';
import type { ChangeOperation } from './entities/change.entity.js';
import { ObjectFeedRepository } from './object-feed.repository.js';
import { objectView, type StoredObject, type WrittenChange } from './object-rows.js';
import { ObjectErrors } from './objects.errors.js';

/**
 * A feed position: collection id and the sequence number of the last change already delivered; `t`, the
 * marking ceiling the position was issued under when below RED (the listing's, `maxTLP=` included).
 */
interface ChangesCursor {
  c: number;
  s: number;
  t?: TlpRank;
}

function isChangesCursor(value: unknown): value is ChangesCursor {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { c, s, t, ...rest } = value as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    Number.isSafeInteger(c) &&
    (c as number) >= 1 &&
    Number.isSafeInteger(s) &&
    (s as number) >= 0 &&
    (t === undefined || (Number.isInteger(t) && (t as number) >= 0 && (t as number) < RED))
  );
}

/** The cursor of a position read under `ceiling`: an unrestricted one (RED) is the cursor it was before markings. */
export function encodeChangesCursor(collectionId: number, seq: number, ceiling: TlpRank = RED): string {
  return encodeCursor({ c: collectionId, s: seq, ...(ceiling < RED && { t: ceiling }) } satisfies ChangesCursor);
}

/**
 * The change feed and its retention.
 *
 * Positions are given by the ChangeSequencer to committed records only, per collection, contiguously
 * and together with the collection's last_seq, so a reader that sees position N sees every position
 * below it: the feed is gap-free, and a cursor ("the last position delivered") never skips a change
 * that is numbered later. Two changes of one object are numbered in their commit order. See
 * CONTRIBUTING.md, "The change feed".
 *
 * Read-your-writes: a feed read, and the first listing page (which issues the changes cursor), first make
 * sure every change committed before them is numbered: when the collection has unnumbered records, they
 * wait for a pass that started after they looked (`caughtUp`).
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
    private readonly repository: ObjectFeedRepository,
    private readonly retention: ChangeRetentionRepository,
    private readonly collections: CollectionsService,
    private readonly events: DomainEvents,
    private readonly sequencer: ChangeSequencer,
    bus: InvalidationBus,
  ) {
    this.feedSignals = new LongPoll(bus, FEED_TOPIC);
  }

  onModuleInit(): void {
    this.stopPruning = schedulePeriodicJob('ChangesPruning', this.config.jobIntervalSeconds, () => this.prune());
  }

  onModuleDestroy(): void {
    this.stopPruning?.();
  }

  /**
   * wire-contract §3.2: a next link after the last change on every non-empty page, none on an empty one.
   * With `wait`, an empty page is held until a change of the collection is numbered (on any instance).
   *
   * Under `policy`'s ceiling (extensions §19 "Feed per key") the page shows each record as the key may see it
   * and leaves out those it may not, while its cursor moves past every record it read: positions stay
   * gap-free for the key. A page that read only such records is empty and still links `next` (and a
   * long-poll answers it at once: its cursor moved); only a page that read nothing has no link, and only
   * that one waits. The ceiling is the key's, narrowed by the one the cursor carries (the listing's that
   * issued it), so a follower's view never widens without a new listing.
   */
  async page(policy: ReadPolicy, collectionName: string, query: ChangesQueryDto, gone?: AbortSignal): Promise<PageResult<ObjectChangeView>> {
    const page = pageRequestOf(query);
    const collection = await this.collections.findByName(collectionName);
    if (page.cursor === undefined) throw ObjectErrors.cursorRequired();
    const cursor = decodeCursor(page.cursor, isChangesCursor);
    if (cursor.c !== collection.id) throw ObjectErrors.foreignCursor();
    // The ceiling the cursor was issued under goes on with it, never widened: a follower of a listing read with
    // maxTLP= stays within it, whatever its key may read.
    const seen = policy.narrowedTo(cursor.t);
    // Ready once records were read, shown or not: a page of records the key may not see moves its cursor.
    const options = { waitSeconds: waitSecondsOf(query.wait), gone, ready: (records: unknown[]) => records.length > 0 };
    const read = () => this.repository.changesAfter(seen, collection.id, cursor.s, page.limit);
    let first = true;
    const rows = await this.feedSignals.poll(String(collection.id), options, async () => {
      // Later checks follow a wake-up, which the sequencer sends once it has numbered.
      const { lastSeq, prunedSeq, rows } = first ? await this.caughtUp(read) : await read();
      first = false;
      // Never issued: positions only ever come from a committed last_seq.
      if (cursor.s > lastSeq) throw ObjectErrors.unknownCursor();
      if (cursor.s < prunedSeq) throw ObjectErrors.cursorOutOfRange();
      return rows;
    });
    const shown = rows.filter((row): row is typeof row & { operation: ChangeOperation; object: StoredObject; tlp: number } => row.operation !== null);
    // The stored jsonb orders its keys by length; the view keeps the ObjectView order (type, keys, context).
    const items = shown.map(({ operation, object, reason, tlp }) => ({
      operation,
      object: objectView({ ...object, tlp }),
      ...(reason !== null && { reason }),
    }));
    // After the last change shown (and an empty page's -1): past every record read, also those not shown.
    const end = rows.length === 0 ? cursor.s : Number(rows[rows.length - 1].position);
    const positionAfter = (index: number) => (index === shown.length - 1 ? end : Number(shown[index].position));
    return new PageResult(items, (index) => encodeChangesCursor(collection.id, positionAfter(index), seen.ceiling), rows.length > 0);
  }

  /**
   * `read` (a statement that also says whether the collection has unnumbered change records), made
   * after every change committed before the call is numbered: when some are pending, it waits for a
   * numbering pass that started after the first read, and reads again.
   */
  async caughtUp<Result extends { pending: boolean }>(read: () => Promise<Result>): Promise<Result> {
    const result = await read();
    if (!result.pending) return result;
    await this.sequencer.settled();
    return read();
  }

  /**
   * After the commit of change records of the collection (and only then), with what ObjectsRepository
   * or ObjectExpiryRepository wrote: kicks the sequencer (which numbers them and wakes the long-polling followers on every
   * instance) and emits the domain events. Every writer of change records calls it (or `announceRecorded`).
   */
  announce(collection: Announced, changes: WrittenChange[]): void {
    if (changes.length === 0) return;
    this.sequencer.kick();
    for (const change of changes) this.emit(collection.name, change);
  }

  /**
   * `announce` for a write that does not hold its changes in hand (a batch): the records with ids
   * `recorded.firstId` to `lastId`. They are read back only when someone listens to object events, after
   * the response, and a failure to read them is only logged.
   */
  announceRecorded(collection: Announced, recorded: RecordedIds): void {
    this.sequencer.kick();
    if (!OBJECT_EVENTS.some((name) => this.events.has(name))) return;
    void this.repository
      .changesWritten(collection.id, recorded.firstId, recorded.lastId)
      .then((changes) => {
        for (const change of changes) this.emit(collection.name, change);
      })
      .catch((error: unknown) => this.logger.error(`object events of a batch not delivered: ${String(error)}`));
  }

  private emit(collection: string, { operation, object, reason }: WrittenChange): void {
    if (operation === 'Add') this.events.emit('intel.object.added', { collection, object });
    else if (operation === 'Update') this.events.emit('intel.object.updated', { collection, object });
    else this.events.emit('intel.object.removed', { collection, object, reason: reason ?? 'Deleted' });
  }

  /**
   * Moves the feed's pruned position past records older than CHANGES_RETENTION_DAYS and removes those older
   * than HISTORY_RETENTION_DAYS (object history reads them that long); run by the periodic job, public for tests.
   */
  async prune(): Promise<void> {
    let total = 0;
    for (;;) {
      const removed = await this.retention.prune(this.config.changesRetentionDays, this.config.historyRetentionDays, PRUNE_BATCH);
      if (removed === undefined) break; // another instance is pruning
      total += removed;
      if (removed === 0) break;
    }
    if (total > 0) this.logger.log(`pruned ${total} change records`);
  }
}
