import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { SWEEP_LOCK } from '../database/advisory-locks.js';
import { whileHoldingSessionLock } from '../database/session-lock.js';
import { BlobReferencesRepository } from './blob-references.repository.js';
import { FILE_STORAGE, type FileStorage } from './storage/file-storage.js';

/**
 * A blob older than this that no row refers to is an orphan: a put completes and its row is committed
 * within one request, so an hour leaves a wide margin for a slow database before a live blob could be
 * mistaken for one.
 */
const ORPHAN_GRACE_MS = 60 * 60 * 1000;
/** Temporaries and multipart uploads are touched while alive; a day without completion means abandoned. */
const TEMPORARY_GRACE_MS = 24 * 60 * 60 * 1000;

export interface SweepResult {
  temporaries: number;
  orphans: number;
}

/**
 * Removes what interrupted uploads left in storage (extensions §6, decisions §10 "a failed upload leaves
 * nothing"): temporaries and incomplete multipart uploads of writes that never finished, and orphan
 * blobs, written completely by a process that died before it committed the row that would refer to them.
 */
@Injectable()
export class StorageSweepService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(StorageSweepService.name);
  private stop: (() => void) | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly references: BlobReferencesRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.stop = schedulePeriodicJob('FileboxStorageSweep', this.config.jobIntervalSeconds, async () => {
      const result = await this.sweep();
      if (result && (result.orphans > 0 || result.temporaries > 0)) {
        this.logger.log(`removed ${result.orphans} orphan blobs and ${result.temporaries} temporaries from ${this.storage.description}`);
      }
    });
  }

  onModuleDestroy(): void {
    this.stop?.();
  }

  /** One sweep (public for tests, which pass `now` to skip the grace periods); undefined when another instance holds the lock. */
  sweep(now = new Date(Date.now())): Promise<SweepResult | undefined> {
    return whileHoldingSessionLock(this.dataSource, SWEEP_LOCK, async () => {
      const temporaries = await this.storage.sweepTemporaries(new Date(now.getTime() - TEMPORARY_GRACE_MS));
      let orphans = 0;
      for await (const keys of this.storage.listBlobs(new Date(now.getTime() - ORPHAN_GRACE_MS))) {
        for (const key of await this.references.unreferenced(keys)) {
          await this.storage.delete(key);
          orphans++;
        }
      }
      return { temporaries, orphans };
    });
  }
}
