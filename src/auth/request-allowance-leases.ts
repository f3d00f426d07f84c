import { performance } from 'node:perf_hooks';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { PreparedStatement } from '../common/sql/prepared-statement.js';

/**
 * Counts one request against one limit inside a caller's transaction (several limits counted all or
 * none). The row lock of the upsert serialises concurrent counts, and the guarded update refuses the
 * increment once the count has reached the limit.
 */
export const COUNT_ONE = `
  INSERT INTO auth_request_count (limit_id, window_start, count)
  VALUES ($1, (now() AT TIME ZONE 'utc')::date, 1)
  ON CONFLICT (limit_id, window_start)
  DO UPDATE SET count = auth_request_count.count + 1 WHERE auth_request_count.count < $2
  RETURNING count`;

/** Most units granted ahead of use at once: bounds what a crashed instance leaves counted. */
const MOST_AHEAD = 64;
/**
 * Units ahead of use are granted only while at least this many times as many remain ungranted, so near
 * the limit every unit goes to a request that is already waiting and no instance holds units that
 * another one would need.
 */
const AHEAD_FRACTION = 16;
/** The most waiting requests that one grant serves (bounds the latency of the last of a batch). */
const MAX_BATCH = 512;
/**
 * The lease recorded in the database outlives the holder's own expiry by this much: time for the
 * holder's give-back statement to commit (even on a busy machine: a late give-back means a false 429),
 * and for the difference between its timer and the database clock over one lease. An instance refused
 * while a lease runs counts again until it has ended (RequestLimitsService), so this only delays the
 * 429s of a limit that is really exhausted, right after its last grant ahead of use.
 */
export const LEASE_MARGIN_MS = 250;

/**
 * Units granted ahead of use when the counter holds `count` and `$2` requests wait: up to `$5`
 * (MOST_AHEAD, or 0 to grant none), at most 1/AHEAD_FRACTION of what the waiting requests leave.
 */
const aheadAt = (count: string) => `CASE WHEN $3::int - ${count} >= $2::int THEN least($5::int, ($3::int - ${count} - $2::int) / ${AHEAD_FRACTION}) ELSE 0 END`;
/** Units one grant adds when the counter holds `count`: the waiting requests that fit, plus those ahead. */
const grantAt = (count: string) => `least($2::int, $3::int - ${count}) + ${aheadAt(count)}`;

/**
 * Grants `$2` waiting requests, plus units ahead of use while far from the limit `$3`, in one statement
 * under the counter row's lock. Whatever is granted is counted at once, so the stored count always
 * includes every unit any instance may still spend, and the guard `count < $3` with `least(...)` never
 * lets it pass the limit: at most `$3 - count` are granted, the first waiters get them, the others are
 * refused. `granted` records how many this statement added, read back by its own RETURNING (the row is
 * locked meanwhile), which numbers the units. A grant ahead of use pushes `lease_until` (database clock)
 * to the end of its lease (`$4` ms, margin included); `greatest` keeps the latest of concurrent grants.
 * The ms to the next UTC midnight bound the lease: a unit of today is never spent tomorrow.
 */
const GRANT = `
  INSERT INTO auth_request_count AS c (limit_id, window_start, count, granted, lease_until)
  VALUES ($1, (now() AT TIME ZONE 'utc')::date, ${grantAt('0')}, ${grantAt('0')},
          CASE WHEN ${aheadAt('0')} > 0 THEN now() + $4::float8 * interval '1 millisecond' END)
  ON CONFLICT (limit_id, window_start) DO UPDATE
  SET count = c.count + ${grantAt('c.count')},
      granted = ${grantAt('c.count')},
      lease_until = CASE WHEN ${aheadAt('c.count')} > 0
                         THEN greatest(c.lease_until, now() + $4::float8 * interval '1 millisecond')
                         ELSE c.lease_until END
  WHERE c.count < $3::int AND ${grantAt('c.count')} > 0
  RETURNING count - granted AS before, count AS after, window_start::text AS "window",
    (extract(epoch FROM date_trunc('day', now() AT TIME ZONE 'utc') + interval '1 day' - (now() AT TIME ZONE 'utc'))
      * 1000)::float8 AS "msToMidnight"`;

/**
 * Gives back units granted ahead of use and never spent, to the window they were counted in only
 * (after midnight a give-back lowers yesterday's counter, never today's). Units are removed from the
 * holder before this runs, so each unit is given back at most once and never spent afterwards.
 */
const GIVE_BACK = `
  UPDATE auth_request_count SET count = count - $3 WHERE limit_id = $1 AND window_start = $2::date`;

/** Ms until today's lease of a counter ends (database clock; negative: ended), NULL without one. */
const LEASE_LEFT = `
  SELECT (extract(epoch FROM lease_until - now()) * 1000)::float8 AS ms FROM auth_request_count
  WHERE limit_id = $1 AND window_start = (now() AT TIME ZONE 'utc')::date`;

const GRANT_PREPARED = new PreparedStatement<{ before: number; after: number; window: string; msToMidnight: number }>('auth_grant_requests', GRANT);
const GIVE_BACK_PREPARED = new PreparedStatement<never>('auth_give_back_requests', GIVE_BACK);
const LEASE_LEFT_PREPARED = new PreparedStatement<{ ms: number | null }>('auth_request_lease_left', LEASE_LEFT);

interface Waiter {
  resolve: (unit: number | null) => void;
  reject: (error: unknown) => void;
}

/** Consecutive units of one window granted to this instance ahead of use. */
interface Block {
  window: string;
  next: number;
  last: number;
  /** `performance.now()` after which no unit of the block may be spent. */
  expiresAt: number;
}

interface LimitState {
  limit: number;
  waiters: Waiter[];
  /** Oldest first. */
  blocks: Block[];
  granting: boolean;
  /** A request left few units: grant the next block before they run out. */
  refill: boolean;
  /** Units ahead of use in the last grant (0 near the limit). */
  blockSize: number;
  /** The highest unit number reported in this window, so that Remaining never rises on this instance. */
  reported: { window: string; unit: number };
}

/**
 * Request allowances handed out in blocks per instance (decisions §4, issue 17). The counter row of a
 * limit and day stays the single source of truth, exact across instances:
 *
 * - A grant counts every unit it hands out, in the same statement, guarded by the limit; an instance
 *   spends only units granted to it. So the stored count is at least the requests executed and never
 *   above the limit: never one request past it, however many instances.
 * - Requests that arrive while a grant is in flight wait for the next one together (one statement per
 *   batch). Far from the limit a grant adds up to MOST_AHEAD units ahead of use, and the next block is
 *   asked for while half of the last one is left, so most requests take a unit from memory and wait for
 *   no database round trip and no commit.
 * - Extra counts do not persist: a block is spent for at most `leaseMs` (and never past the database's
 *   midnight), then its unused units are given back (`count - unused`, same window); `close` gives back
 *   everything on shutdown. A crashed instance's unused units stay counted (the safe direction).
 * - An instance refused by the counter while another may still hold units asks `leaseLeftMs` and counts
 *   again once the lease has ended (RequestLimitsService), so a holder's unspent units are not refused.
 */
export class RequestAllowanceLeases {
  private readonly logger = new Logger('RequestLimits');
  private readonly states = new Map<number, LimitState>();
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly leaseMs: number,
  ) {}

  /**
   * This request's unit number (its count, never lower than one reported before on this instance in
   * the same window), or null when the limit is exhausted (nothing counted).
   */
  count(limitId: number, limit: number): Promise<number | null> {
    const state = this.stateOf(limitId, limit);
    const unit = this.take(limitId, state);
    if (unit !== null) return Promise.resolve(unit);
    const counted = new Promise<number | null>((resolve, reject) => state.waiters.push({ resolve, reject }));
    this.startGranting(limitId, state);
    return counted;
  }

  /** Ms until the lease recorded on today's counter ends (negative: ended), null without one. */
  async leaseLeftMs(limitId: number): Promise<number | null> {
    const rows = await LEASE_LEFT_PREPARED.run(this.dataSource, [limitId]);
    return rows[0]?.ms ?? null;
  }

  /** Shutdown: no more units ahead of use; every unused one is given back before this resolves. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [limitId, state] of this.states) this.giveBackAll(limitId, state);
    // Grants in flight give back what they bring (addBlock), so wait for them, then for the give-backs.
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private stateOf(limitId: number, limit: number): LimitState {
    let state = this.states.get(limitId);
    if (!state) {
      state = { limit, waiters: [], blocks: [], granting: false, refill: false, blockSize: 0, reported: { window: '', unit: 0 } };
      this.states.set(limitId, state);
    } else if (state.limit !== limit) {
      // The limit was changed: units granted under the old one go back, the next grant uses the new one.
      this.giveBackAll(limitId, state);
      state.limit = limit;
    }
    return state;
  }

  /** A unit from this instance's blocks, or null when it holds none it may spend now. */
  private take(limitId: number, state: LimitState): number | null {
    const now = performance.now();
    while (state.blocks.length > 0) {
      const block = state.blocks[0];
      if (block.next <= block.last && now < block.expiresAt) {
        const unit = block.next;
        block.next += 1;
        if (this.unitsLeft(state) * 2 <= state.blockSize) {
          state.refill = true;
          this.startGranting(limitId, state);
        }
        return this.report(state, block.window, unit);
      }
      state.blocks.shift();
      this.giveBack(limitId, block);
    }
    return null;
  }

  private unitsLeft(state: LimitState): number {
    return state.blocks.reduce((sum, block) => sum + block.last - block.next + 1, 0);
  }

  private report(state: LimitState, window: string, unit: number): number {
    if (state.reported.window !== window) state.reported = { window, unit };
    else state.reported.unit = Math.max(state.reported.unit, unit);
    return state.reported.unit;
  }

  private startGranting(limitId: number, state: LimitState): void {
    if (state.granting) return;
    state.granting = true;
    this.track(this.grantWhileNeeded(limitId, state));
  }

  /** One grant statement at a time per limit; what arrives meanwhile is served by the next one. */
  private async grantWhileNeeded(limitId: number, state: LimitState): Promise<void> {
    try {
      while (state.waiters.length > 0 || (state.refill && !this.closed)) await this.grantOnce(limitId, state);
    } finally {
      // Synchronously after the loop's last check: a request queued from now on starts a new grant.
      state.granting = false;
    }
  }

  private async grantOnce(limitId: number, state: LimitState): Promise<void> {
    state.refill = false;
    const batch = state.waiters.splice(0, MAX_BATCH);
    const sentAt = performance.now();
    let granted;
    try {
      const ahead = this.closed ? 0 : MOST_AHEAD;
      [granted] = await GRANT_PREPARED.run(this.dataSource, [limitId, batch.length, state.limit, this.leaseMs + LEASE_MARGIN_MS, ahead]);
    } catch (error) {
      for (const waiter of batch) waiter.reject(error);
      if (batch.length === 0) this.logger.warn(`Granting request units ahead of use failed: ${String(error)}`);
      return;
    }
    if (!granted) {
      state.blockSize = 0;
      for (const waiter of batch) waiter.resolve(null);
      return;
    }
    let unit = granted.before;
    for (const waiter of batch) {
      if (unit < granted.after) {
        unit += 1;
        waiter.resolve(this.report(state, granted.window, unit));
      } else waiter.resolve(null);
    }
    state.blockSize = granted.after - unit;
    if (state.blockSize === 0) return;
    // Measured from before the statement was sent, so the holder's expiry comes before the database's
    // `lease_until` and before its midnight, whatever the round trip took.
    const expiresAt = sentAt + Math.min(this.leaseMs, granted.msToMidnight);
    this.addBlock(limitId, state, { window: granted.window, next: unit + 1, last: granted.after, expiresAt });
    // Requests that queued behind this grant take units of the new block rather than wait for the next grant.
    while (state.waiters.length > 0) {
      const next = this.take(limitId, state);
      if (next === null) break;
      state.waiters.shift()!.resolve(next);
    }
  }

  private addBlock(limitId: number, state: LimitState, block: Block): void {
    if (this.closed) {
      this.giveBack(limitId, block);
      return;
    }
    state.blocks.push(block);
    setTimeout(
      () => {
        const index = state.blocks.indexOf(block);
        if (index < 0) return; // spent or given back already
        state.blocks.splice(index, 1);
        this.giveBack(limitId, block);
      },
      Math.max(0, block.expiresAt - performance.now()),
    ).unref();
  }

  private giveBackAll(limitId: number, state: LimitState): void {
    for (const block of state.blocks.splice(0)) this.giveBack(limitId, block);
  }

  /** The block must already be out of `state.blocks`: its units can no longer be spent. */
  private giveBack(limitId: number, block: Block): void {
    const unused = block.last - block.next + 1;
    block.next = block.last + 1;
    if (unused <= 0) return;
    this.track(
      GIVE_BACK_PREPARED.run(this.dataSource, [limitId, block.window, unused]).then(
        () => undefined,
        (error: unknown) => this.logger.warn(`Giving back ${unused} request unit(s) failed; they stay counted today: ${String(error)}`),
      ),
    );
  }

  private track(promise: Promise<void>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }
}
