import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoUtc } from '../common/sql/timestamps.js';
import type { SchemaIdParamDto } from '../schema-registry/dto/schema.dto.js';
import { SchemaRegistryErrors } from '../schema-registry/schema-registry.errors.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import type { QuotaDto, QuotaView } from './dto/quota.dto.js';
import { InsightErrors } from './insight.errors.js';
import { usedIn, windowStart } from './task-statements.js';

/** The quota statements' parameters: the schema, and for `put` its limits. */
const QUOTA_PARAMETERS = namedParameters(['schemaId', 'perMinute', 'perHour', 'perDay', 'maxLeased']);
const SCHEMA_PARAMETERS = namedParameters(['schemaId']);

/**
 * The quota as the take statement judges it: each window's use in the current UTC window, the live
 * leases, and when the next unit frees (the latest end among the exhausted limits; null when none is).
 */
const QUOTA_VIEW = `
  SELECT q.schema_id AS "schemaID", q.per_minute AS "perMinute", q.per_hour AS "perHour", q.per_day AS "perDay",
         q.max_leased AS "maxLeased",
         json_build_object('minute', ${usedIn('q', 'minute')}, 'hour', ${usedIn('q', 'hour')}, 'day', ${usedIn('q', 'day')},
                           'leased', l.leased) AS used,
         ${isoUtc(`GREATEST(
           CASE WHEN q.per_minute <= ${usedIn('q', 'minute')} THEN ${windowStart('minute')} + interval '1 minute' END,
           CASE WHEN q.per_hour <= ${usedIn('q', 'hour')} THEN ${windowStart('hour')} + interval '1 hour' END,
           CASE WHEN q.per_day <= ${usedIn('q', 'day')} THEN ${windowStart('day')} + interval '1 day' END,
           CASE WHEN q.max_leased <= l.leased THEN l.first_end END
         )`)} AS "nextUnitAt"
    FROM insight_quota q,
         LATERAL (SELECT count(*)::int AS leased, min(lease_expires_at) AS first_end FROM insight_task
                   WHERE schema_id = q.schema_id AND state = 'Pending' AND lease_expires_at > now()) l
   WHERE q.schema_id = ${SCHEMA_PARAMETERS.$.schemaId}`;

const q = QUOTA_PARAMETERS.$;
const PUT = `
  INSERT INTO insight_quota (schema_id, per_minute, per_hour, per_day, max_leased)
  VALUES (${q.schemaId}, ${q.perMinute}, ${q.perHour}, ${q.perDay}, ${q.maxLeased})
  ON CONFLICT (schema_id) DO UPDATE
    SET per_minute = EXCLUDED.per_minute, per_hour = EXCLUDED.per_hour, per_day = EXCLUDED.per_day, max_leased = EXCLUDED.max_leased`;

/** Quotas per result schema (extensions §16); the take statement enforces them. */
@Injectable()
export class QuotasService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly schemas: SchemaRegistryService,
  ) {}

  /** Sets the limits (what the windows have used is kept). */
  async put({ schema_id }: SchemaIdParamDto, quota: QuotaDto): Promise<QuotaView> {
    const limits = {
      perMinute: quota.perMinute ?? null,
      perHour: quota.perHour ?? null,
      perDay: quota.perDay ?? null,
      maxLeased: quota.maxLeased ?? null,
    };
    if (Object.values(limits).every((limit) => limit === null)) throw InsightErrors.emptyQuota();
    if (!(await this.schemas.exists('insight', schema_id))) throw SchemaRegistryErrors.schemaNotFound('insight', schema_id);
    await this.dataSource.query(PUT, QUOTA_PARAMETERS.values({ schemaId: schema_id, ...limits }));
    return this.get({ schema_id });
  }

  async get({ schema_id }: SchemaIdParamDto): Promise<QuotaView> {
    const [row]: QuotaView[] = await this.dataSource.query(QUOTA_VIEW, SCHEMA_PARAMETERS.values({ schemaId: schema_id }));
    if (!row) throw InsightErrors.quotaNotFound(schema_id);
    for (const limit of ['perMinute', 'perHour', 'perDay', 'maxLeased'] as const) if (row[limit] === null) delete row[limit];
    return row;
  }

  async remove({ schema_id }: SchemaIdParamDto): Promise<void> {
    const [, deleted]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM insight_quota WHERE schema_id = ${SCHEMA_PARAMETERS.$.schemaId}`,
      SCHEMA_PARAMETERS.values({ schemaId: schema_id }),
    );
    if (deleted === 0) throw InsightErrors.quotaNotFound(schema_id);
  }
}
