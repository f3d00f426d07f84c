import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PreparedStatement } from '../common/sql/prepared-statement.js';
import type { AuditEntry } from './audit-entry.js';

/** One statement for a whole group of entries (AuditTrail): its cost hardly grows with the group. */
const INSERT_ENTRIES = new PreparedStatement<never>(
  'audit_insert_entries',
  `INSERT INTO audit_entry (at, key_id, request_id, method, route, target, status, address)
   SELECT * FROM unnest($1::timestamptz[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::smallint[], $8::text[])`,
);

/** A stored entry with its id (the keyset's tie-breaker). */
export interface AuditRow extends AuditEntry {
  id: string;
}

export interface AuditFilter {
  keyId?: number;
  method?: string;
  route?: string;
  target?: string;
  since?: Date;
  until?: Date;
  /** Entries strictly before this `(at, id)` position (newest first). */
  before?: { at: Date; id: string };
}

/** Entries removed per statement by retention: each statement stays short, whatever has piled up. */
const PRUNE_BATCH = 10_000;

@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(entries: readonly AuditEntry[]): Promise<void> {
    await INSERT_ENTRIES.run(this.dataSource, [
      entries.map((entry) => entry.at.toISOString()),
      entries.map((entry) => entry.keyId),
      entries.map((entry) => entry.requestId),
      entries.map((entry) => entry.method),
      entries.map((entry) => entry.route),
      entries.map((entry) => entry.target),
      entries.map((entry) => entry.status),
      entries.map((entry) => entry.address),
    ]);
  }

  /** Newest first, keyset `(at, id)`; `take` rows. */
  page(filter: AuditFilter, take: number): Promise<AuditRow[]> {
    const params: unknown[] = [];
    const where: string[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.before) where.push(`(at, id) < (${param(filter.before.at.toISOString())}::timestamptz, ${param(filter.before.id)}::bigint)`);
    if (filter.keyId !== undefined) where.push(`key_id = ${param(filter.keyId)}`);
    if (filter.method !== undefined) where.push(`method = ${param(filter.method)} AND route = ${param(filter.route)}`);
    if (filter.target !== undefined) {
      // The target itself or anything under it (`intel/c1` covers `intel/c1/url:...`): in byte order (the
      // column is COLLATE "C") everything starting with `<t>/` lies in [`<t>/`, `<t>0`), '0' following '/'.
      const target = param(filter.target);
      where.push(`(target = ${target} OR (target >= ${target} || '/' AND target < ${target} || '0'))`);
    }
    if (filter.since) where.push(`at >= ${param(filter.since.toISOString())}::timestamptz`);
    if (filter.until) where.push(`at < ${param(filter.until.toISOString())}::timestamptz`);
    return this.dataSource.query(
      `SELECT id::text, at, key_id AS "keyId", request_id AS "requestId", method, route, target, status, address
         FROM audit_entry ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY at DESC, id DESC LIMIT ${param(take)}`,
      params,
    );
  }

  /** Deletes entries older than `days`, oldest first, a batch per statement; returns how many went. */
  async pruneOlderThan(days: number): Promise<number> {
    let total = 0;
    for (;;) {
      const [{ count }]: { count: number }[] = await this.dataSource.query(
        `WITH gone AS (
           DELETE FROM audit_entry WHERE id IN (
             SELECT id FROM audit_entry WHERE at < now() - make_interval(days => $1) ORDER BY at, id LIMIT $2)
           RETURNING 1)
         SELECT count(*)::int AS count FROM gone`,
        [days, PRUNE_BATCH],
      );
      total += count;
      if (count < PRUNE_BATCH) return total;
    }
  }
}
