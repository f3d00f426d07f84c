import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { COUNT_ONE } from './request-allowance-leases.js';

/** Today's counter of a limit, with how long the last lease recorded on it still runs (null: none). */
export interface TodayCountRow {
  limitId: number;
  count: number;
  leaseLeftMs: number | null;
}

/** The statements of `auth_request_count` outside the allowance leases (RequestLimitsService holds the rules). */
@Injectable()
export class RequestCountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  today(limitIds: readonly number[]): Promise<TodayCountRow[]> {
    return this.dataSource.query(
      `SELECT limit_id AS "limitId", count,
              (extract(epoch FROM lease_until - now()) * 1000)::float8 AS "leaseLeftMs"
         FROM auth_request_count
        WHERE limit_id = ANY($1::int[]) AND window_start = (now() AT TIME ZONE 'utc')::date`,
      [limitIds],
    );
  }

  /** Counts one request against the limit in the manager's transaction: the new count, or null when it is exhausted. */
  async countOne(manager: EntityManager, limitId: number, limit: number): Promise<number | null> {
    const rows: { count: number }[] = await manager.query(COUNT_ONE, [limitId, limit]);
    return rows.length === 1 ? rows[0].count : null;
  }

  /** Drops counters of past windows. */
  async pruneOldWindows(): Promise<void> {
    await this.dataSource.query(`DELETE FROM auth_request_count WHERE window_start < (now() AT TIME ZONE 'utc')::date - 1`);
  }
}
