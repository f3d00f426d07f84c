import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/errors/api-error.js';
import { BUILTIN_RESOURCES, type Principal } from '../common/guard/access.js';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { isUuid, UUID_SOURCE } from '../common/validation/uuid.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { CollectionsService } from '../intel/collections.service.js';
import { ObjectsService } from '../intel/objects.service.js';
import type { WriteOrigin } from '../intel/write-origin.js';
import { StixImportService } from './stix-import.service.js';
import { TaxiiFeedService } from './taxii-feed.service.js';
import { TaxiiResult } from './taxii-http.js';
import { TaxiiErrors } from './taxii.errors.js';

/** How long a status resource is kept at least (TAXII clients poll it after a POST). */
const STATUS_RETENTION_HOURS = 24;

/** An indicator's STIX id: its life's uid (lower case, as the service writes it). */
const INDICATOR_ID = new RegExp(`^indicator--(${UUID_SOURCE})$`);

interface StatusDetail {
  id: string;
  version: string;
  message?: string;
}

interface StatusRow {
  id: string;
  collection: string;
  status: string;
  requestTimestamp: string;
  totalCount: number;
  successCount: number;
  failureCount: number;
  pendingCount: number;
  successes: StatusDetail[];
  failures: StatusDetail[];
}

function statusView(row: StatusRow) {
  return {
    id: row.id,
    status: row.status,
    request_timestamp: row.requestTimestamp,
    total_count: row.totalCount,
    success_count: row.successCount,
    failure_count: row.failureCount,
    pending_count: row.pendingCount,
    ...(row.successes.length > 0 && { successes: row.successes }),
    ...(row.failures.length > 0 && { failures: row.failures }),
  };
}

/** What identifies a posted object in a status: its id and version (modified, else created, else the request's time). */
function detailOf(object: unknown, requestTimestamp: string, message?: string): StatusDetail {
  const record = (typeof object === 'object' && object !== null ? object : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    id: text(record.id) ?? '',
    version: text(record.modified) ?? text(record.created) ?? requestTimestamp,
    ...(message !== undefined && { message }),
  };
}

/**
 * TAXII writes: envelopes of objects (through StixImportService, hence the intel batch path), object
 * deletes, and the status resources, kept in PostgreSQL so that every instance answers for them.
 */
@Injectable()
export class TaxiiWritesService implements OnModuleInit, OnModuleDestroy {
  private stopCleanup?: () => void;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly feed: TaxiiFeedService,
    private readonly imports: StixImportService,
    private readonly collections: CollectionsService,
    private readonly objects: ObjectsService,
  ) {}

  onModuleInit(): void {
    this.stopCleanup = schedulePeriodicJob('TaxiiStatusCleanup', this.config.jobIntervalSeconds, () => this.removeOldStatuses());
  }

  onModuleDestroy(): void {
    this.stopCleanup?.();
  }

  /** `POST .../objects/`: every object is handled now, so the status is `complete` at once (202 with it). */
  async post(origin: WriteOrigin, taxiiId: string, body: unknown): Promise<TaxiiResult> {
    const collection = await this.feed.writableCollection(taxiiId);
    const objects = this.imports.parse(body);
    const requestTimestamp = new Date().toISOString();
    const report = await this.imports.import(origin, collection.name, objects);
    const successes: StatusDetail[] = [];
    const failures: StatusDetail[] = [];
    for (const item of report.items) {
      if (item.status === 'Failed') failures.push(detailOf(objects[item.index], requestTimestamp, item.error?.message));
      else successes.push(detailOf(objects[item.index], requestTimestamp));
    }
    const row: StatusRow = {
      id: randomUUID(),
      collection: collection.name,
      status: 'complete',
      requestTimestamp,
      totalCount: objects.length,
      successCount: successes.length,
      failureCount: failures.length,
      pendingCount: 0,
      successes,
      failures,
    };
    await this.dataSource.query(
      `INSERT INTO taxii_status (id, collection, status, request_timestamp, total_count, success_count, failure_count, pending_count, successes, failures)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        row.id,
        row.collection,
        row.status,
        row.requestTimestamp,
        row.totalCount,
        row.successCount,
        row.failureCount,
        row.pendingCount,
        JSON.stringify(successes),
        JSON.stringify(failures),
      ],
    );
    return new TaxiiResult(statusView(row), {}, 202);
  }

  /** `GET {root}/status/{id}/`: only for a key that may read or write the collection written to (404 otherwise). */
  async status(principal: Principal, statusId: string) {
    const rows: StatusRow[] = isUuid(statusId)
      ? await this.dataSource.query(
          `SELECT id, collection, status, request_timestamp AS "requestTimestamp", total_count AS "totalCount",
                  success_count AS "successCount", failure_count AS "failureCount", pending_count AS "pendingCount", successes, failures
             FROM taxii_status WHERE id = $1`,
          [statusId],
        )
      : [];
    const row = rows[0];
    // A status outlives nothing it names: its collection may have been deleted since (then it is not found).
    const collection =
      row &&
      (await this.collections.findByName(row.collection).catch((error: unknown) => {
        if (error instanceof ApiError && error.code === 'NotFound') return undefined;
        throw error;
      }));
    const resource = collection && { id: collection.resourceId, parentId: BUILTIN_RESOURCES.intel.id };
    if (!resource || !(principal.holds(resource, 'Read') || principal.holds(resource, 'Write'))) throw TaxiiErrors.statusNotFound(statusId);
    return statusView(row);
  }

  /** `DELETE .../objects/{id}/`: an indicator's object is removed (its last version, revoked); 404 when there is none. */
  async remove(origin: WriteOrigin, taxiiId: string, objectId: string): Promise<void> {
    const collection = await this.feed.writableCollection(taxiiId);
    const life = INDICATOR_ID.exec(objectId)?.[1];
    if (life === undefined || !(await this.objects.removeLife(origin, collection.name, life))) throw TaxiiErrors.objectNotFound(objectId);
  }

  /** Removes statuses older than the retention; run by the periodic job, public for tests. */
  async removeOldStatuses(): Promise<void> {
    await this.dataSource.query(`DELETE FROM taxii_status WHERE created_at < now() - make_interval(hours => $1)`, [STATUS_RETENTION_HOURS]);
  }
}
