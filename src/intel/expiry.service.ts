import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ChangesService } from './changes.service.js';
import { ObjectExpiryRepository } from './object-expiry.repository.js';
import { jobOrigin } from './write-origin.js';

/** Expired objects removed per transaction (one collection at a time). */
const EXPIRY_BATCH = 1000;

/**
 * Objects looked at per transaction for decay (one collection at a time): each batch judges their scores and
 * removes the decayed ones in one statement, under the collection's exclusive writer lock, so writers wait at
 * most one batch.
 */
const DECAY_SCAN = 2000;

/**
 * Indicator lifecycle: removes expired objects, each with a `Remove` change (reason Expired) in the
 * feed's order, so followers learn of the expiry as a change. Listings hide an expired object from the
 * moment it expires; this job makes it a change. Then, in collections with `decayedAction: expire`
 * (extensions §18), the objects whose score is below the threshold, each with a `Remove` (reason Decayed).
 * One instance runs it at a time (advisory lock).
 */
@Injectable()
export class ExpiryService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ExpiryService.name);
  private stop?: () => void;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: ObjectExpiryRepository,
    private readonly changes: ChangesService,
  ) {}

  onModuleInit(): void {
    this.stop = schedulePeriodicJob('ObjectExpiry', this.config.expiryIntervalSeconds, () => this.expireDue());
  }

  onModuleDestroy(): void {
    this.stop?.();
  }

  /**
   * Removes every object expired by now, in batches; run by the periodic job, public for tests. Each run
   * gets an id of its own, recorded as the request id of its Remove records (extensions §14).
   */
  async expireDue(): Promise<void> {
    const origin = jobOrigin('expiry', randomUUID());
    let total = 0;
    for (;;) {
      const batch = await this.repository.expireDue(origin, EXPIRY_BATCH);
      if (batch === undefined || batch.removed.length === 0) break; // another instance runs it, or done
      total += batch.removed.length;
      this.changes.announce(batch.collection, batch.removed);
    }
    if (total > 0) this.logger.log(`removed ${total} expired objects`);
    await this.removeDecayed(origin);
  }

  /**
   * Every object of a collection with `decayedAction: expire` scoring below its threshold now, removed: each
   * collection walked once by id, a batch at a time (each batch judges the scores at its own time).
   */
  private async removeDecayed(origin: ReturnType<typeof jobOrigin>): Promise<void> {
    let total = 0;
    for (const collection of await this.repository.decayingCollections()) {
      let afterId = '0';
      for (;;) {
        const batch = await this.repository.removeDecayed(origin, collection, afterId, DECAY_SCAN);
        if (batch === undefined) return; // another instance runs the job
        if (batch.removed.length > 0) this.changes.announce(collection, batch.removed);
        total += batch.removed.length;
        if (batch.scannedTo === null) break;
        afterId = batch.scannedTo;
      }
    }
    if (total > 0) this.logger.log(`removed ${total} decayed objects`);
  }
}
