import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { SEQUENCER_LOCK } from '../database/advisory-locks.js';
import { InvalidationBus } from '../database/invalidation-bus.js';

/** The invalidation-bus topic of the change feed's long-polls; the key is the collection id. */
export const FEED_TOPIC = 'feed';

/** Records numbered per statement at most: a backlog is numbered in short transactions. */
const PASS_ROWS = 10_000;

/**
 * The least time between two positions of a collection's feed. Positions are also times (`seq_at`, a TAXII
 * `date_added`): strictly increasing per collection, and two microseconds apart so that what a standard feed
 * serves at one position (an indicator version at its time, its observable one microsecond later) never
 * shares a time with the next position.
 */
export const POSITION_SPACING = `interval '2 microseconds'`;

/**
 * CTEs numbering committed records, for a statement run after its transaction took SEQUENCER_LOCK (so its
 * snapshot, taken after the grant, sees every earlier pass's numbers and every record that committed
 * before). `unnumbered` selects the records (`which`: extra conditions and the LIMIT, in id order):
 * each gets, per collection, the next number after last_seq in id order, and last_seq moves by their
 * count, in the same transaction, so numbers become visible together with the last_seq covering them. Each
 * record also gets its time: after the collection's last one and not before now (clock_timestamp), spaced
 * by POSITION_SPACING, in number order; `last_seq_at` moves with them. A
 * record still in flight is invisible to the snapshot and waits for a later pass. `moved` locks a
 * collection row (UPDATE) before `numbered` touches its records, which it can only do with `moved`'s row.
 *
 * `numbered` reads the records' positions from arrays (ids, numbers and times, all in id order), which
 * PostgreSQL cannot estimate and takes for a few rows: it then probes the primary key once per record, in
 * a nested loop driven by the arrays, however many records there are. As a join with `positions`,
 * statistics taken while many records were unnumbered (a bulk of writes just before ANALYZE) made it
 * expect the pass's LIMIT in full and hash-join the whole change table instead: a sequential scan of every
 * record ever kept, per pass (20k records: 5,700 buffers, 9 ms, to number 30); and a filter `ch.id = ANY`
 * of the ids (estimated at ten rows) made it loop over `positions` once per record, quadratic in a backlog
 * (80 s for 14,000 records). test/database/query-plans.e2e-spec.ts checks the plan.
 */
export function numberingCtes(which: string): string {
  return `unnumbered AS MATERIALIZED (
    SELECT id, collection_id FROM intel_change WHERE seq IS NULL ${which}
  ),
  moved AS (
    UPDATE intel_collection c SET last_seq = c.last_seq + u.count,
           last_seq_at = GREATEST(c.last_seq_at, clock_timestamp()) + u.count * ${POSITION_SPACING}
      FROM (SELECT collection_id, count(*) AS count FROM unnumbered GROUP BY collection_id) u
     WHERE c.id = u.collection_id
    RETURNING c.id, c.last_seq - u.count AS base, c.last_seq_at - u.count * ${POSITION_SPACING} AS base_at
  ),
  positions AS (
    SELECT u.id, moved.base + u.n AS seq, moved.base_at + u.n * ${POSITION_SPACING} AS seq_at
      FROM (SELECT id, collection_id, row_number() OVER (PARTITION BY collection_id ORDER BY id) AS n FROM unnumbered) u
      JOIN moved ON moved.id = u.collection_id
  ),
  numbered AS (
    UPDATE intel_change ch SET seq = p.seq, seq_at = p.seq_at
      FROM unnest(ARRAY(SELECT id FROM positions ORDER BY id), ARRAY(SELECT seq FROM positions ORDER BY id),
                  ARRAY(SELECT seq_at FROM positions ORDER BY id)) AS p(id, seq, seq_at)
     WHERE ch.id = p.id
  )`;
}

/**
 * The start of a numbering transaction: SEQUENCER_LOCK, and for the rest of the transaction plans that walk
 * the index of unnumbered records in id order (an index scan) rather than read it as a bitmap. A record
 * numbered leaves a dead entry in that partial index until VACUUM; an index scan marks such entries dead in
 * the index as it passes them, once, but a bitmap scan visits their rows again in every pass. PostgreSQL
 * chose the bitmap whenever the LIMIT did not look selective, so after a burst (a bulk of batch items, or
 * bench row 3a's baseline) each pass of a few records read the heap rows of every record numbered since
 * the last vacuum (9,000 of them: 1,480 buffers and 15 ms per pass; in bench row 3a 14 ms per pass, 0.47 ms
 * of statement time per object, against 2 ms per pass with index scans). Sequential scans are off too:
 * statistics taken while many records were unnumbered would otherwise prefer reading the whole feed. Both
 * only raise the cost of those plans (set_config local to the transaction), so no statement fails for lack
 * of an index.
 */
const NUMBERING_TRANSACTION = `SELECT pg_advisory_xact_lock($1), set_config('enable_bitmapscan', 'off', true),
                                      set_config('enable_seqscan', 'off', true)`;

/** A pass: the oldest $1 committed unnumbered records of any collection; the collections and the count. */
const NUMBER_COMMITTED = `
  WITH ${numberingCtes('ORDER BY id LIMIT $1')}
  SELECT COALESCE(array_agg(moved.id), '{}') AS collections, (SELECT count(*)::int FROM unnumbered) AS count FROM moved`;

/**
 * Gives committed change records their feed position (seq); see CONTRIBUTING.md, "The change feed".
 *
 * Writers do not wait for it: after a commit that recorded changes they `kick` it and answer. At most one
 * pass runs per process and one more is queued while it runs, so kicks from many writers coalesce into
 * few passes; passes of several instances serialise on SEQUENCER_LOCK. A pass notifies the feed's
 * long-polls of the collections it numbered, inside its transaction (delivered on its commit, to every
 * instance).
 *
 * Records left unnumbered by an instance that died between its commit and its kick are numbered by the
 * next pass anywhere (any write's kick, start-up), by any reader of their collection (a feed read or first
 * listing page that sees them waits for a pass), and at the latest by the periodic check
 * (JOB_INTERVAL_SECONDS). A follower already waiting when that instance died learns of them at its wait's
 * deadline, when it reads again: the same delay as for any wake-up lost with a crashed instance. The
 * check is not frequent on purpose: it is a query on every instance, whether or not anything is written.
 */
@Injectable()
export class ChangeSequencer implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ChangeSequencer.name);
  /** The passes in progress in this process, until they found nothing more to number. */
  private running?: Promise<void>;
  /** Passes that start once `running` ends: what a caller arriving during a pass waits for. */
  private queued?: Promise<void>;
  private stopChecks?: () => void;
  /** The periodic check in progress, awaited on shutdown like the passes. */
  private checking?: Promise<void>;
  private closing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bus: InvalidationBus,
  ) {}

  onModuleInit(): void {
    this.kick();
    this.stopChecks = schedulePeriodicJob('ChangeSequencer', this.config.jobIntervalSeconds, () => {
      this.checking = this.numberLeftovers();
      return this.checking;
    });
  }

  /** No pass starts any more; the ones under way finish before the database connections close. */
  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    this.stopChecks?.();
    await Promise.allSettled([this.checking, this.running, this.queued]);
  }

  /** After a commit that recorded changes: number them soon, without waiting. */
  kick(): void {
    if (this.closing) return;
    this.settled().catch((error: unknown) => this.logger.error(`numbering pass failed: ${String(error)}`));
  }

  /**
   * Resolves when a pass that STARTED after this call has ended: every change record committed before
   * the call is then numbered (by that pass or an earlier one, here or on another instance).
   */
  settled(): Promise<void> {
    if (this.closing) return this.running ?? Promise.resolve();
    if (!this.running) {
      this.running = this.passes().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.settled();
      });
    return this.queued;
  }

  /** The periodic check: a pass only if some record is waiting (a look at the partial index). */
  async numberLeftovers(): Promise<void> {
    const [{ pending }]: { pending: boolean }[] = await this.dataSource.query('SELECT EXISTS (SELECT 1 FROM intel_change WHERE seq IS NULL) AS pending');
    if (pending) await this.settled();
  }

  /**
   * Runs `read` (given the transaction and the CTEs that number every committed record of the
   * collection, for ITS statement, whose $1 must be the collection id) in a transaction holding SEQUENCER_LOCK, then wakes the collection's
   * followers on commit. One statement that numbers and reads sees one snapshot: what it reads and the
   * numbers it gives cover exactly the same committed changes (the first listing page's cursor).
   */
  numberAndRead<Result>(collectionId: number, read: (manager: EntityManager, numbering: string) => Promise<Result>): Promise<Result> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(NUMBERING_TRANSACTION, [SEQUENCER_LOCK]);
      const result = await read(manager, numberingCtes('AND collection_id = $1::int'));
      await this.bus.publish(manager, FEED_TOPIC, String(collectionId));
      return result;
    });
  }

  private async passes(): Promise<void> {
    while ((await this.pass()) === PASS_ROWS);
  }

  /** One numbering transaction; the number of records it numbered. */
  private pass(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      // Blocking: a pass that starts after a commit must number it, so it waits for a running one.
      await manager.query(NUMBERING_TRANSACTION, [SEQUENCER_LOCK]);
      const [{ collections, count }]: { collections: number[]; count: number }[] = await manager.query(NUMBER_COMMITTED, [PASS_ROWS]);
      if (collections.length > 0) await this.bus.publish(manager, FEED_TOPIC, collections.map(String));
      return count;
    });
  }
}
