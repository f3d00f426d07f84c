import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CommonErrors } from '../common/errors/api-error.js';
import { schedulePeriodicJob } from '../common/jobs/periodic-job.js';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../common/pagination/page.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AuditRepository, type AuditFilter, type AuditRow } from './audit.repository.js';
import type { AuditEntryView, ListAuditQueryDto } from './dto/audit.dto.js';

interface AuditCursor {
  /** `at` of the last entry sent, ISO 8601 with milliseconds (what is stored). */
  t: string;
  i: string;
}

function isAuditCursor(value: unknown): value is AuditCursor {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length !== 2) return false;
  const { t, i } = value as Record<string, unknown>;
  return typeof t === 'string' && !Number.isNaN(Date.parse(t)) && /^\d{4}-\d{2}-\d{2}T/.test(t) && typeof i === 'string' && /^[1-9]\d{0,18}$/.test(i);
}

@Injectable()
export class AuditService implements OnModuleInit, OnModuleDestroy {
  private stopRetention?: () => void;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: AuditRepository,
  ) {}

  onModuleInit(): void {
    this.stopRetention = schedulePeriodicJob('AuditRetention', this.config.jobIntervalSeconds, () => this.pruneExpired());
  }

  onModuleDestroy(): void {
    this.stopRetention?.();
  }

  /** Removes entries older than AUDIT_RETENTION_DAYS; run by the periodic job, public for tests. */
  async pruneExpired(): Promise<void> {
    await this.repository.pruneOlderThan(this.config.auditRetentionDays);
  }

  async list(query: ListAuditQueryDto): Promise<PageResult<AuditEntryView>> {
    const page = pageRequestOf(query);
    const filter: AuditFilter = {};
    if (page.cursor !== undefined) {
      const cursor = decodeCursor(page.cursor, isAuditCursor);
      filter.before = { at: new Date(cursor.t), id: cursor.i };
    }
    if (query.keyID !== undefined) filter.keyId = Number(query.keyID);
    if (query.action !== undefined) {
      const space = query.action.indexOf(' ');
      filter.method = query.action.slice(0, space);
      filter.route = query.action.slice(space + 1);
    }
    if (query.target !== undefined) filter.target = query.target;
    if (query.since !== undefined) filter.since = moment(query.since, 'since');
    if (query.until !== undefined) filter.until = moment(query.until, 'until');
    const rows = await this.repository.page(filter, page.limit + 1);
    return keysetPage(rows, page.limit, (row) => encodeCursor({ t: row.at.toISOString(), i: row.id }), toView);
  }
}

/** The pattern let through a date that does not exist (month 13): that is a malformed filter too. */
function moment(text: string, name: string): Date {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw CommonErrors.invalidQuery(`${name} is not a valid date and time`);
  return date;
}

function toView(row: AuditRow): AuditEntryView {
  return {
    id: Number(row.id),
    at: row.at,
    keyID: row.keyId,
    requestID: row.requestId,
    method: row.method,
    route: row.route,
    action: `${row.method} ${row.route}`,
    target: row.target,
    status: row.status,
    address: row.address,
  };
}
