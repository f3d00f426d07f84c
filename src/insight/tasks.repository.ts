import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../common/indicators/index.js';
import { sizeBoundedPage } from '../common/pagination/size-bounded-page.js';
import type { TaskResult, TaskState } from './entities/task.entity.js';
import { OPEN_FOR_REPORT, TASK_STATEMENTS } from './task-statements.js';

export interface TaskParamsRow {
  schemaId: string;
  objectKeys: ObjectKey[] | null;
  fileId: string | null;
}

export interface TaskRow extends TaskParamsRow {
  id: string;
  state: TaskState;
  deliveries: number;
  /** The last lease has run out (judged by the database clock, like every lease decision). */
  leaseExpired: boolean;
  /** Milliseconds until the running lease ends; null without a running lease. */
  leaseEndsInMs: number | null;
  result: TaskResult | null;
  errorCode: string | null;
  errorMessage: string | null;
}

/** A listed task: its position (created_at to the microsecond, UTC text) for the newest-first keyset. */
export interface ListedTaskRow extends TaskRow {
  createdAt: string;
}

const TASK_COLUMNS = `id, schema_id AS "schemaId", object_keys AS "objectKeys", file_id AS "fileId", state, deliveries,
              COALESCE(lease_expires_at <= now(), false) AS "leaseExpired",
              CASE WHEN lease_expires_at > now() THEN ceil(extract(epoch FROM lease_expires_at - now()) * 1000)::float8 END
                AS "leaseEndsInMs",
              result,
              error_code AS "errorCode", error_message AS "errorMessage"`;

export interface QueueRow extends TaskParamsRow {
  id: string;
  createdAt: Date;
}

/** Statements of the task table; every one is a single statement, atomic on its own. */
@Injectable()
export class TasksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(task: TaskParamsRow): Promise<string> {
    const [{ id }]: { id: string }[] = await this.dataSource.query(
      `INSERT INTO insight_task (schema_id, object_keys, file_id) VALUES ($1, $2, $3) RETURNING id`,
      [task.schemaId, task.objectKeys && JSON.stringify(task.objectKeys), task.fileId],
    );
    return id;
  }

  async find(id: string): Promise<TaskRow | undefined> {
    const rows: TaskRow[] = await this.dataSource.query(
      `SELECT ${TASK_COLUMNS} FROM insight_task WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  /**
   * Newest first, after the position `after` when given, up to `limit` rows and about `maxBytes` (results
   * can be large). `state` is the state the view shows: a Pending task past its last allowed lease is
   * Failed (decisions §9) though no take has recorded it yet. Each variant is one walk of the newest-first
   * index; the state test filters along it.
   */
  async listPage(
    state: TaskState | undefined,
    after: { t: string; i: string } | undefined,
    limit: number,
    maxBytes: number,
    maxDeliveries: number,
  ): Promise<ListedTaskRow[]> {
    const parameters: unknown[] = [limit, maxBytes];
    const where: string[] = [];
    if (state !== undefined) {
      parameters.push(state, maxDeliveries);
      where.push(
        `CASE WHEN state = 'Pending' AND deliveries >= $4 AND lease_expires_at <= now() THEN 'Failed' ELSE state END = $3`,
      );
    }
    if (after !== undefined) {
      parameters.push(after.t, after.i);
      where.push(`(created_at, id) < ($${parameters.length - 1}::timestamptz, $${parameters.length}::uuid)`);
    }
    const query = sizeBoundedPage(
      {
        select: `${TASK_COLUMNS}, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "createdAt"`,
        from: `FROM insight_task${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`,
        orderBy: 'created_at DESC, id DESC',
        // Stored sizes (compressed, without reading TOAST): an estimate, as sizeBoundedPage expects.
        rowBytes: 'COALESCE(pg_column_size(result), 0) + COALESCE(pg_column_size(object_keys), 0) + 200',
      },
      '$1',
      '$2',
    );
    return this.dataSource.query(query, parameters);
  }

  /**
   * Leases up to `limit` tasks; tasks past the delivery limit get its error (deliveryLimitError) and their
   * ids come back as `failed`.
   */
  async take(limit: number, maxDeliveries: number, leaseSeconds: number): Promise<{ taken: QueueRow[]; failed: string[] }> {
    const rows: (QueueRow & { exhausted: boolean })[] = await this.dataSource.query(
      TASK_STATEMENTS.take,
      TASK_STATEMENTS.takeParameters(limit, maxDeliveries, leaseSeconds),
    );
    return {
      taken: rows.filter((row) => !row.exhausted).map(({ exhausted: _, ...row }) => row),
      failed: rows.filter((row) => row.exhausted).map((row) => row.id),
    };
  }

  /**
   * Milliseconds until a running lease ends that will make its task takeable again (not one at the delivery
   * limit), or null when none runs. Judged by the database clock, like every lease decision.
   */
  async nextTakeableInMs(maxDeliveries: number): Promise<number | null> {
    const [{ ms }]: { ms: number | null }[] = await this.dataSource.query(
      `SELECT ceil(extract(epoch FROM min(lease_expires_at) - now()) * 1000)::float8 AS ms
         FROM insight_task
        WHERE state = 'Pending' AND lease_expires_at > now() AND deliveries < $1`,
      [maxDeliveries],
    );
    return ms;
  }

  /**
   * Open tasks: leased (a lease running now) and pending (never taken, or their lease ran out). Reads only the
   * partial queue index's rows (state = 'Pending'), not the completed and failed history.
   */
  async countOpen(): Promise<{ pending: number; leased: number }> {
    const [row]: { pending: number; leased: number }[] = await this.dataSource.query(
      `SELECT count(*) FILTER (WHERE lease_expires_at > now())::int AS leased,
              count(*) FILTER (WHERE lease_expires_at IS NULL OR lease_expires_at <= now())::int AS pending
         FROM insight_task WHERE state = 'Pending'`,
    );
    return row;
  }

  /** The schema of a task open for a report; `open` false when the task may not take one now. */
  async reportTarget(id: string, maxDeliveries: number): Promise<{ schemaId: string; open: boolean } | undefined> {
    const rows: { schemaId: string; open: boolean }[] = await this.dataSource.query(
      `SELECT schema_id AS "schemaId", (${OPEN_FOR_REPORT}) AS open FROM insight_task WHERE id = $1`,
      [id, maxDeliveries],
    );
    return rows[0];
  }

  /** Returns false when the task does not exist or is not open for a report. */
  async complete(id: string, maxDeliveries: number, result: TaskResult): Promise<boolean> {
    return this.update(TASK_STATEMENTS.complete, TASK_STATEMENTS.completeParameters(id, maxDeliveries, result));
  }

  /** Returns false when the task does not exist or is not open for a report. */
  async fail(id: string, maxDeliveries: number, error: { code: string; message: string }): Promise<boolean> {
    return this.update(
      `UPDATE insight_task SET state = 'Failed', error_code = $3, error_message = $4 WHERE id = $1 AND ${OPEN_FOR_REPORT}`,
      [id, maxDeliveries, error.code, error.message],
    );
  }

  async exists(id: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(`SELECT 1 FROM insight_task WHERE id = $1`, [id]);
    return rows.length > 0;
  }

  /** TypeORM answers a bare UPDATE with `[rows, affectedCount]`. */
  private async update(sql: string, parameters: unknown[]): Promise<boolean> {
    const [, affected]: [unknown[], number] = await this.dataSource.query(sql, parameters);
    return affected > 0;
  }
}
