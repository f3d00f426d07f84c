import { setTimeout as sleep } from 'node:timers/promises';
import { BeforeApplicationShutdown, Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RequestLimitGrant } from '../common/guard/access.js';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { LEASE_MARGIN_MS, RequestAllowanceLeases } from './request-allowance-leases.js';
import { RequestCountsRepository } from './request-counts.repository.js';

export interface LimitDecision {
  allowed: boolean;
  /** The most restrictive matched limit, for the RateLimit-* headers. */
  limit: number;
  remaining: number;
  /** Seconds until the window (the UTC day) ends. */
  resetSeconds: number;
}

export function secondsUntilUtcMidnight(now = Date.now()): number {
  const next = new Date(now);
  next.setUTCHours(24, 0, 0, 0);
  return Math.max(1, Math.ceil((next.getTime() - now) / 1000));
}

/** How often a refused request looks again whether another instance's lease has ended. */
const LEASE_POLL_MS = 50;

/** Per-key daily request limits (decisions §4), counted atomically in PostgreSQL. */
@Injectable()
export class RequestLimitsService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown {
  private stopPruning?: () => void;
  private readonly leases: RequestAllowanceLeases;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly counts: RequestCountsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.leases = new RequestAllowanceLeases(dataSource, config.requestLimitLeaseMs);
  }

  onModuleInit(): void {
    this.stopPruning = schedulePeriodicJob('RequestCountPruning', this.config.jobIntervalSeconds, () => this.pruneOldWindows());
  }

  onModuleDestroy(): void {
    this.stopPruning?.();
  }

  /** Gives back the units this instance holds ahead of use, while the database is still open. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.leases.close();
  }

  /**
   * Counts one request against every given limit, or against none when any of them is exhausted.
   * Refused while another instance may still hold units of the exhausted limit (its lease in the
   * database has not ended), the request counts again once that lease has ended, so units another
   * instance gives back are not refused; the wait is bounded by two leases.
   */
  async consume(limits: readonly RequestLimitGrant[]): Promise<LimitDecision> {
    const deadline = performance.now() + 2 * (this.config.requestLimitLeaseMs + LEASE_MARGIN_MS);
    for (;;) {
      const { decision, refusedBy } = await this.countOnce(limits);
      if (refusedBy === undefined) return decision;
      const leaseLeft = await this.leases.leaseLeftMs(refusedBy);
      const waitLeft = deadline - performance.now();
      if (leaseLeft === null || leaseLeft <= 0 || waitLeft <= 0) return decision;
      await sleep(Math.min(leaseLeft, LEASE_POLL_MS, waitLeft));
    }
  }

  /**
   * Today's count of each limit (absent: none counted yet). Units granted ahead of use are counted before
   * they are spent (request-allowance-leases.ts), so the counts are read once no instance may hold any:
   * after the last lease recorded on the counters has ended, when its holder has given back what it did
   * not spend. That takes at most about a lease (REQUEST_LIMIT_LEASE_MS plus a margin), and at most two
   * under continuous traffic, after which the counts include units still held.
   */
  async todayCounts(limitIds: readonly number[]): Promise<Map<number, number>> {
    const deadline = performance.now() + 2 * (this.config.requestLimitLeaseMs + LEASE_MARGIN_MS);
    for (;;) {
      const rows = await this.counts.today(limitIds);
      const leaseLeft = Math.max(0, ...rows.map((row) => row.leaseLeftMs ?? 0));
      const waitLeft = deadline - performance.now();
      if (leaseLeft <= 0 || waitLeft <= 0) return new Map(rows.map((row) => [row.limitId, row.count]));
      await sleep(Math.min(leaseLeft, waitLeft));
    }
  }

  private async countOnce(limits: readonly RequestLimitGrant[]): Promise<{ decision: LimitDecision; refusedBy?: number }> {
    const ordered = [...limits].sort((a, b) => a.id - b.id); // one lock order: no deadlocks between requests
    const resetSeconds = secondsUntilUtcMidnight();
    let refusedBy: number | undefined;
    const run = async (count: (grant: RequestLimitGrant) => Promise<number | null>): Promise<LimitDecision> => {
      let tightest = { limit: ordered[0].limit, remaining: ordered[0].limit };
      for (const grant of ordered) {
        const counted = await count(grant);
        if (counted === null) {
          refusedBy = grant.id;
          return { allowed: false, limit: grant.limit, remaining: 0, resetSeconds };
        }
        const remaining = grant.limit - counted;
        if (remaining < tightest.remaining) tightest = { limit: grant.limit, remaining };
      }
      return { allowed: true, ...tightest, resetSeconds };
    };
    // One limit (the usual case): a unit of this instance's allowance (request-allowance-leases.ts).
    if (ordered.length === 1) {
      const decision = await run((grant) => this.leases.count(grant.id, grant.limit));
      return { decision, refusedBy };
    }
    try {
      const decision = await this.dataSource.transaction(async (manager: EntityManager) => {
        // Several limits must be counted all or none, so in one transaction, one statement per limit.
        const decision = await run((grant) => this.counts.countOne(manager, grant.id, grant.limit));
        // Refused: roll back the increments of the limits counted before the exhausted one.
        if (!decision.allowed) throw new Refused(decision);
        return decision;
      });
      return { decision };
    } catch (error) {
      if (error instanceof Refused) return { decision: error.decision, refusedBy };
      throw error;
    }
  }

  /** Drops counters of past windows; called by the housekeeping job. */
  async pruneOldWindows(): Promise<void> {
    await this.counts.pruneOldWindows();
  }
}

class Refused extends Error {
  constructor(readonly decision: LimitDecision) {
    super('request limit exhausted');
  }
}
