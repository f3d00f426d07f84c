import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RequestLimitGrant } from '../common/guard/access.js';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { COUNT_ONE, RequestCountBatcher } from './request-count-batcher.js';

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

/** Per-key daily request limits (decisions §4), counted atomically in PostgreSQL. */
@Injectable()
export class RequestLimitsService implements OnModuleInit, OnModuleDestroy {
  private stopPruning?: () => void;
  private readonly batcher: RequestCountBatcher;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.batcher = new RequestCountBatcher(dataSource);
  }

  onModuleInit(): void {
    this.stopPruning = schedulePeriodicJob('RequestCountPruning', this.config.jobIntervalSeconds, () =>
      this.pruneOldWindows(),
    );
  }

  onModuleDestroy(): void {
    this.stopPruning?.();
  }

  /** Counts one request against every given limit, or against none when any of them is exhausted. */
  async consume(limits: readonly RequestLimitGrant[]): Promise<LimitDecision> {
    const ordered = [...limits].sort((a, b) => a.id - b.id); // one lock order: no deadlocks between requests
    const resetSeconds = secondsUntilUtcMidnight();
    const run = async (count: (grant: RequestLimitGrant) => Promise<number | null>): Promise<LimitDecision> => {
      let tightest = { limit: ordered[0].limit, remaining: ordered[0].limit };
      for (const grant of ordered) {
        const counted = await count(grant);
        if (counted === null) {
          return { allowed: false, limit: grant.limit, remaining: 0, resetSeconds };
        }
        const remaining = grant.limit - counted;
        if (remaining < tightest.remaining) tightest = { limit: grant.limit, remaining };
      }
      return { allowed: true, ...tightest, resetSeconds };
    };
    // One limit (the usual case): counted together with the concurrent requests of the same limit.
    if (ordered.length === 1) return run((grant) => this.batcher.count(grant.id, grant.limit));
    try {
      return await this.dataSource.transaction(async (manager: EntityManager) => {
        // Several limits must be counted all or none, so in one transaction, one statement per limit.
        const decision = await run(async (grant) => {
          const rows: { count: number }[] = await manager.query(COUNT_ONE, [grant.id, grant.limit]);
          return rows.length === 1 ? rows[0].count : null;
        });
        // Refused: roll back the increments of the limits counted before the exhausted one.
        if (!decision.allowed) throw new Refused(decision);
        return decision;
      });
    } catch (error) {
      if (error instanceof Refused) return error.decision;
      throw error;
    }
  }

  /** Drops counters of past windows; called by the housekeeping job. */
  async pruneOldWindows(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM auth_request_count WHERE window_start < (now() AT TIME ZONE 'utc')::date - 1`,
    );
  }
}

class Refused extends Error {
  constructor(readonly decision: LimitDecision) {
    super('request limit exhausted');
  }
}
