import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ROLLUP_LOCK } from '../database/advisory-locks.js';
import { SightingsRepository } from './sightings.repository.js';

// One instance at a time runs the job (ROLLUP_LOCK, a session advisory lock; the others skip their turn).
/** Rows handled per statement: each statement is its own short transaction. */
const BATCH = 10_000;
const DAY_MS = 86_400_000;

export interface RollupResult {
  rolledUp: number;
  pruned: number;
}

/**
 * Keeps the sightings bounded: raw items older than SIGHTING_RAW_DAYS become hourly sums per key, source
 * and kind; items and roll-ups older than SIGHTING_RETENTION_DAYS go. Every step is idempotent (see the
 * statements in SightingsRepository), so a run cut short is finished by the next.
 */
@Injectable()
export class SightingRollupService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SightingRollupService.name);
  private stop?: () => void;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: SightingsRepository,
  ) {}

  onModuleInit(): void {
    this.stop = schedulePeriodicJob('SightingRollup', this.config.jobIntervalSeconds, async () => {
      const result = await this.run();
      if (result && result.rolledUp + result.pruned > 0) {
        this.logger.log(`rolled up ${result.rolledUp} sightings into hours, removed ${result.pruned} past retention`);
      }
    });
  }

  onModuleDestroy(): void {
    this.stop?.();
  }

  /** One run (public for tests, which pass `now` to move the clock); undefined when another instance holds the lock. */
  async run(now = new Date()): Promise<RollupResult | undefined> {
    const { rawDays, retentionDays } = this.config.sightings;
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }]: { locked: boolean }[] = await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [ROLLUP_LOCK]);
      if (!locked) return undefined;
      try {
        const result = { rolledUp: 0, pruned: 0 };
        const retained = new Date(now.getTime() - retentionDays * DAY_MS);
        // Pruned first: nothing is rolled up only to be removed.
        result.pruned = await drain((batch) => this.repository.prune(runner.manager, retained, batch));
        await drain((batch) => this.repository.pruneClientIds(runner.manager, retained, batch));
        result.rolledUp = await drain((batch) => this.repository.rollUp(runner.manager, new Date(now.getTime() - rawDays * DAY_MS), batch));
        return result;
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [ROLLUP_LOCK]);
      }
    } finally {
      await runner.release();
    }
  }
}

/** Runs a batched step until a batch comes back short; the rows it handled in all. */
async function drain(step: (batch: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const handled = await step(BATCH);
    total += handled;
    if (handled < BATCH) return total;
  }
}
