import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RequestLimitGrant } from '../common/guard/access.js';
import { PreparedStatement } from '../common/sql/prepared-statement.js';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

export interface LimitDecision {
  allowed: boolean;
  /** The most restrictive matched limit, for the RateLimit-* headers. */
  limit: number;
  remaining: number;
  /** Seconds until the window (the UTC day) ends. */
  resetSeconds: number;
}

// One statement per limit: the row lock of the upsert serialises concurrent requests, and the guarded
// update refuses the increment once the count has reached the limit, so no request is lost or let through.
const CONSUME = `
  INSERT INTO auth_request_count (limit_id, window_start, count)
  VALUES ($1, (now() AT TIME ZONE 'utc')::date, 1)
  ON CONFLICT (limit_id, window_start)
  DO UPDATE SET count = auth_request_count.count + 1 WHERE auth_request_count.count < $2
  RETURNING count`;

const CONSUME_PREPARED = new PreparedStatement<{ count: number }>('auth_consume_request_limit', CONSUME);

export function secondsUntilUtcMidnight(now = Date.now()): number {
  const next = new Date(now);
  next.setUTCHours(24, 0, 0, 0);
  return Math.max(1, Math.ceil((next.getTime() - now) / 1000));
}

/** Per-key daily request limits (decisions §4), counted atomically in PostgreSQL. */
@Injectable()
export class RequestLimitsService implements OnModuleInit, OnModuleDestroy {
  private stopPruning?: () => void;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

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
    const run = async (count: (grant: RequestLimitGrant) => Promise<{ count: number }[]>): Promise<LimitDecision> => {
      let tightest = { limit: ordered[0].limit, remaining: ordered[0].limit };
      for (const grant of ordered) {
        const rows = await count(grant);
        if (rows.length === 0) {
          return { allowed: false, limit: grant.limit, remaining: 0, resetSeconds };
        }
        const remaining = grant.limit - rows[0].count;
        if (remaining < tightest.remaining) tightest = { limit: grant.limit, remaining };
      }
      return { allowed: true, ...tightest, resetSeconds };
    };
    // One limit (the usual case): one autocommitted statement, prepared since every limited request runs it.
    if (ordered.length === 1) return run((grant) => CONSUME_PREPARED.run(this.dataSource, [grant.id, grant.limit]));
    try {
      return await this.dataSource.transaction(async (manager: EntityManager) => {
        const decision = await run((grant) => manager.query(CONSUME, [grant.id, grant.limit]));
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
