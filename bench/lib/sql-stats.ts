import type pg from 'pg';
import { BASELINE_ROLE, SERVICE_ROLE } from './database.js';

export interface StatementFigures {
  /** The normalised statement (pg_stat_statements form), whitespace collapsed, shortened. */
  query: string;
  queryId: string;
  calls: number;
  /** calls ÷ requests of that side (warm-up included), where the side's requests are known. */
  perRequest?: number;
  meanMs: number;
  totalMs: number;
}

export interface SqlFigures {
  service: StatementFigures[];
  baseline: StatementFigures[];
  /** Statements the baseline ran that the service never did (empty when the copy is faithful). */
  baselineOnly: string[];
}

/**
 * pg_stat_statements per side: the service connects as one role and the raw baselines as another, so
 * after a row the statements each side ran, how often and how long they took, can be read apart. This is
 * both the proof that a raw `pg` baseline runs the service's own statements and the first profiling
 * evidence when a row misses its target (extra statements per request, slow statements).
 */
export class SqlStats {
  constructor(private readonly setup: pg.Pool | undefined) {}

  get enabled(): boolean {
    return this.setup !== undefined;
  }

  async reset(): Promise<void> {
    await this.setup?.query('SELECT pg_stat_statements_reset()');
  }

  async collect(requests: { service: number; baseline?: number }): Promise<SqlFigures | undefined> {
    if (!this.setup) return undefined;
    const { rows } = await this.setup.query(
      `SELECT r.rolname AS role, s.queryid::text AS "queryId", s.query, s.calls::float8 AS calls,
              s.mean_exec_time AS "meanMs", s.total_exec_time AS "totalMs"
         FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
        WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND r.rolname IN ($1, $2)
        ORDER BY s.total_exec_time DESC`,
      [SERVICE_ROLE, BASELINE_ROLE],
    );
    const figures = (role: string, sideRequests: number | undefined): StatementFigures[] =>
      (rows as { role: string; queryId: string; query: string; calls: number; meanMs: number; totalMs: number }[])
        .filter((row) => row.role === role)
        .map((row) => ({
          query: row.query.replace(/\s+/g, ' ').trim().slice(0, 160),
          queryId: row.queryId,
          calls: row.calls,
          perRequest: sideRequests ? Math.round((row.calls / sideRequests) * 100) / 100 : undefined,
          meanMs: Math.round(row.meanMs * 1000) / 1000,
          totalMs: Math.round(row.totalMs),
        }));
    const service = figures(SERVICE_ROLE, requests.service);
    const baseline = figures(BASELINE_ROLE, requests.baseline);
    const serviceIds = new Set(service.map((statement) => statement.queryId));
    return { service, baseline, baselineOnly: baseline.filter((statement) => !serviceIds.has(statement.queryId)).map((statement) => statement.query) };
  }
}
