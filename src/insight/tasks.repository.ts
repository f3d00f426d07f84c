import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../common/indicators/index.js';
import { sizeBoundedPage } from '../common/pagination/size-bounded-page.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoMicros } from '../common/sql/timestamps.js';
import { attemptLimitSql, endedWithLeaseSql, LEASE_EXPIRED } from './ended-lease.js';
import type { TaskResult, TaskState } from './entities/task.entity.js';
import type { ReportStanding } from './report-refusal.js';
import { openForReport, TASK_STATEMENTS, type ReportFence, type Taker } from './task-statements.js';

export type { ReportFence, Taker } from './task-statements.js';

export interface TaskParamsRow {
  schemaId: string;
  objectKeys: ObjectKey[] | null;
  fileId: string | null;
}

/** An attempt as `attempt_log` keeps it (timestamps as PostgreSQL writes them in JSON). */
export interface LoggedAttempt {
  attempt: number;
  executor: string | null;
  keyID: number | null;
  takenAt: string | null;
  endedAt: string | null;
  outcome: string | null;
  error: { code: string; message: string } | null;
}

/** A task to register: what it asks, and its options. */
export interface NewTask extends TaskParamsRow {
  priority: number;
  maxAttempts: number | null;
  /** SHA-256 of schema, normalised keys and file content: identical tasks have the same. */
  contentHash: Buffer;
}

const NEW_TASK_COLUMNS = 'schema_id, object_keys, file_id, priority, content_hash, max_attempts';

/** A new task's values by name, in the order of NEW_TASK_COLUMNS. */
const NEW_TASK_NAMES = ['schemaId', 'objectKeys', 'fileId', 'priority', 'contentHash', 'maxAttempts'] as const;
const INSERT_PARAMETERS = namedParameters(NEW_TASK_NAMES);
/** A deduplicating registration's: the new task's, then the age of a completed task it may answer with. */
const DEDUPE_PARAMETERS = namedParameters([...NEW_TASK_NAMES, 'resultMaxAge']);

function newTaskValues(task: NewTask) {
  return {
    schemaId: task.schemaId,
    objectKeys: task.objectKeys && JSON.stringify(task.objectKeys),
    fileId: task.fileId,
    priority: task.priority,
    contentHash: task.contentHash,
    maxAttempts: task.maxAttempts,
  };
}

export interface TaskRow extends TaskParamsRow {
  id: string;
  state: TaskState;
  deliveries: number;
  maxAttempts: number | null;
  cancelRequested: boolean;
  progress: { percent?: number; message?: string } | null;
  attemptLog: LoggedAttempt[];
  /** The current attempt (takenAt null: none). */
  current: {
    executor: string | null;
    keyID: number | null;
    takenAt: Date | null;
    endedAt: Date | null;
    outcome: string | null;
    error: { code: string; message: string } | null;
  };
  /** The last lease has run out (judged by the database clock, like every lease decision). */
  leaseExpired: boolean;
  leaseExpiresAt: Date | null;
  /** Milliseconds until the running lease ends; null without a running lease. */
  leaseEndsInMs: number | null;
  result: TaskResult | null;
  errorCode: string | null;
  errorMessage: string | null;
}

/** The listing's filters, each as the view shows the task. */
export interface TaskFilter {
  state?: TaskState;
  errorCode?: string;
  schemaId?: string;
}

/** A listed task: its position (created_at to the microsecond, UTC text) for the newest-first keyset. */
export interface ListedTaskRow extends TaskRow {
  createdAt: string;
}

const TASK_COLUMNS = `id, schema_id AS "schemaId", object_keys AS "objectKeys", file_id AS "fileId", state, deliveries,
              max_attempts AS "maxAttempts", cancel_requested AS "cancelRequested", progress, attempt_log AS "attemptLog",
              json_build_object('executor', attempt_executor, 'keyID', attempt_key_id, 'takenAt', attempt_taken_at,
                'endedAt', attempt_ended_at, 'outcome', attempt_outcome, 'error', attempt_error) AS current,
              ${LEASE_EXPIRED} AS "leaseExpired", lease_expires_at AS "leaseExpiresAt",
              CASE WHEN lease_expires_at > now() THEN ceil(extract(epoch FROM lease_expires_at - now()) * 1000)::float8 END
                AS "leaseEndsInMs",
              result,
              error_code AS "errorCode", error_message AS "errorMessage"`;

export interface QueueRow extends TaskParamsRow {
  id: string;
  createdAt: Date;
  attempt: number;
  leaseExpiresAt: Date;
  leaseToken: string;
}

export interface FailedReport {
  id: string;
  state: TaskState;
  errorCode: string | null;
  errorMessage: string | null;
  availableAt: Date | null;
}

/** A failure's kind and its timing parameters (TASK_STATEMENTS.fail). */
export interface FailureTiming {
  kind: 'permanent' | 'transient' | 'rateLimited';
  retryBaseSeconds: number;
  retryMaxSeconds: number;
  /** The back-off's random factor, in [0.5, 1]. */
  jitter: number;
  retryAfterSeconds: number | null;
}

/** `WHERE id = ${ID.$.id}`: statements of one task. */
const ID = namedParameters(['id']);

/**
 * The listing's parameters: `limit` rows of at most about `maxBytes`, the filters (null: none) and the
 * position after which the page starts (`afterTime`, `afterId`; null: the first page). A filter left out is
 * NULL, which PostgreSQL folds away as it plans the statement with its values (an unnamed statement is
 * planned for the values it runs with), so each variant is still one walk of the newest-first index.
 */
const LIST_PARAMETERS = namedParameters(['limit', 'maxBytes', 'maxDeliveries', 'state', 'errorCode', 'schemaId', 'afterTime', 'afterId']);

/**
 * The listing's filters, each judging a task as the view shows it: a Pending task past its last lease is
 * Failed (ended-lease.ts) with DeliveryLimitExceeded, or Cancelled when it was cancelled.
 */
function listingFilters(): string {
  const p = LIST_PARAMETERS.$;
  const ended = endedWithLeaseSql(p.maxDeliveries);
  return `WHERE (${p.state}::text IS NULL OR CASE WHEN ${ended} THEN 'Failed' ELSE state END = ${p.state}::text)
            AND (${p.errorCode}::text IS NULL
                 OR CASE WHEN ${ended} THEN CASE WHEN cancel_requested THEN 'Cancelled' ELSE 'DeliveryLimitExceeded' END
                         ELSE error_code END = ${p.errorCode}::text)
            AND (${p.schemaId}::text IS NULL OR schema_id = ${p.schemaId}::text)
            AND (${p.afterTime}::timestamptz IS NULL OR (created_at, id) < (${p.afterTime}::timestamptz, ${p.afterId}::uuid))`;
}

const LIST_PAGE = sizeBoundedPage(
  {
    select: `${TASK_COLUMNS}, ${isoMicros('created_at')} AS "createdAt"`,
    from: `FROM insight_task ${listingFilters()}`,
    orderBy: 'created_at DESC, id DESC',
    // Stored sizes (compressed, without reading TOAST): an estimate, as sizeBoundedPage expects.
    rowBytes: 'COALESCE(pg_column_size(result), 0) + COALESCE(pg_column_size(object_keys), 0) + 200',
  },
  LIST_PARAMETERS.$.limit,
  LIST_PARAMETERS.$.maxBytes,
);

/** Milliseconds until a task becomes takeable by time alone (TasksRepository.nextTakeableInMs). */
const NEXT_TAKEABLE_PARAMETERS = namedParameters(['maxDeliveries']);
const NEXT_TAKEABLE = `
  SELECT ceil(extract(epoch FROM LEAST(
           (SELECT min(lease_expires_at) FROM insight_task
             WHERE state = 'Pending' AND lease_expires_at > now()
               AND deliveries < ${attemptLimitSql(NEXT_TAKEABLE_PARAMETERS.$.maxDeliveries)}),
           (SELECT min(available_at) FROM insight_task
             WHERE state = 'Pending' AND lease_expires_at IS NULL AND available_at > now())) - now()) * 1000)::float8 AS ms`;

/** A report's target and standing: the task, the delivery limit, and (standing) the token's SHA-256. */
const REPORT_PARAMETERS = namedParameters(['id', 'maxDeliveries', 'tokenHash']);
const REPORT_TARGET_PARAMETERS = namedParameters(['id', 'maxDeliveries']);

/** Statements of the task table; every one is a single statement, atomic on its own. */
@Injectable()
export class TasksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(task: NewTask): Promise<string> {
    const [{ id }]: { id: string }[] = await this.dataSource.query(
      `INSERT INTO insight_task (${NEW_TASK_COLUMNS}) VALUES (${NEW_TASK_NAMES.map((name) => INSERT_PARAMETERS.$[name]).join(', ')}) RETURNING id`,
      INSERT_PARAMETERS.values(newTaskValues(task)),
    );
    return id;
  }

  /**
   * A deduplicating registration, one statement: an identical task still Pending (or, with `resultMaxAge`,
   * completed less than that many seconds ago, the newest) is answered; otherwise the task is inserted with
   * its `dedupe_key`, unless the unique index finds an identical one inserted meanwhile (committed, or in
   * flight: the insert waits for it), when nothing is inserted and undefined comes back: the caller runs
   * it again, and the new statement's snapshot sees the winner. Pending tasks are found whatever the mode
   * they were registered with (content_hash is set on all), so the index guards only deduplicating ones.
   */
  async insertUnlessIdentical(task: NewTask, resultMaxAge: number | null): Promise<{ id: string; deduplicated: boolean } | undefined> {
    const p = DEDUPE_PARAMETERS.$;
    const rows: { id: string; deduplicated: boolean }[] = await this.dataSource.query(
      `WITH found AS (
         SELECT id FROM insight_task
          WHERE content_hash = ${p.contentHash} AND (state = 'Pending'
                OR (${p.resultMaxAge}::float8 IS NOT NULL AND state = 'Completed'
                    AND attempt_ended_at > now() - make_interval(secs => ${p.resultMaxAge}::float8)))
          ORDER BY state = 'Pending' DESC, attempt_ended_at DESC NULLS LAST
          LIMIT 1
       ), inserted AS (
         INSERT INTO insight_task (${NEW_TASK_COLUMNS}, dedupe_key)
         SELECT ${p.schemaId}, ${p.objectKeys}::json, ${p.fileId}::uuid, ${p.priority}::smallint, ${p.contentHash}::bytea,
                ${p.maxAttempts}::smallint, ${p.contentHash}::bytea
          WHERE NOT EXISTS (SELECT 1 FROM found)
         ON CONFLICT (dedupe_key) WHERE state = 'Pending' AND dedupe_key IS NOT NULL DO NOTHING
         RETURNING id
       )
       SELECT id, true AS deduplicated FROM found UNION ALL SELECT id, false FROM inserted`,
      DEDUPE_PARAMETERS.values({ ...newTaskValues(task), resultMaxAge }),
    );
    return rows[0];
  }

  async find(id: string): Promise<TaskRow | undefined> {
    const rows: TaskRow[] = await this.dataSource.query(`SELECT ${TASK_COLUMNS} FROM insight_task WHERE id = ${ID.$.id}`, ID.values({ id }));
    return rows[0];
  }

  /**
   * Newest first, after the position `after` when given, up to `limit` rows and about `maxBytes` (results
   * can be large). `state` is the state the view shows: a Pending task past its last allowed lease, or
   * cancelled and past its lease, is Failed (decisions §9, extensions §16) though no take has recorded it yet. Each variant is one walk of the newest-first
   * index; the state test filters along it.
   */
  async listPage(
    filter: TaskFilter,
    after: { t: string; i: string } | undefined,
    limit: number,
    maxBytes: number,
    maxDeliveries: number,
  ): Promise<ListedTaskRow[]> {
    return this.dataSource.query(
      LIST_PAGE,
      LIST_PARAMETERS.values({
        limit,
        maxBytes,
        maxDeliveries,
        state: filter.state ?? null,
        errorCode: filter.errorCode ?? null,
        schemaId: filter.schemaId ?? null,
        afterTime: after?.t ?? null,
        afterId: after?.i ?? null,
      }),
    );
  }

  /**
   * Leases up to `limit` tasks; tasks past the delivery limit get its error (deliveryLimitError) and their
   * ids come back as `failed`.
   */
  async take(
    limit: number,
    maxDeliveries: number,
    leaseSeconds: number,
    taker: Taker,
  ): Promise<{ taken: QueueRow[]; failed: { id: string; error: { code: string; message: string } }[] }> {
    const rows: (QueueRow & { exhausted: boolean; errorCode: string; errorMessage: string })[] = await this.dataSource.query(
      TASK_STATEMENTS.take,
      TASK_STATEMENTS.takeParameters(limit, maxDeliveries, leaseSeconds, taker),
    );
    return {
      taken: rows.filter((row) => !row.exhausted),
      failed: rows.filter((row) => row.exhausted).map((row) => ({ id: row.id, error: { code: row.errorCode, message: row.errorMessage } })),
    };
  }

  /**
   * Milliseconds until a task becomes takeable by time alone: a running lease ends that will make its task
   * takeable again (not one at the delivery limit), or a back-off ends; null when neither is pending.
   * Judged by the database clock, like every lease decision.
   */
  async nextTakeableInMs(maxDeliveries: number): Promise<number | null> {
    const [{ ms }]: { ms: number | null }[] = await this.dataSource.query(NEXT_TAKEABLE, NEXT_TAKEABLE_PARAMETERS.values({ maxDeliveries }));
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
      `SELECT schema_id AS "schemaId", (${openForReport(REPORT_TARGET_PARAMETERS.$.maxDeliveries)}) AS open
         FROM insight_task WHERE id = ${REPORT_TARGET_PARAMETERS.$.id}`,
      REPORT_TARGET_PARAMETERS.values({ id, maxDeliveries }),
    );
    return rows[0];
  }

  /** Returns false when the task does not exist, is not open for a report or the fence refuses it. */
  async complete(id: string, maxDeliveries: number, result: TaskResult, fence: ReportFence): Promise<boolean> {
    return this.update(TASK_STATEMENTS.complete, TASK_STATEMENTS.completeParameters(id, maxDeliveries, result, fence));
  }

  /** The task as the failure left it; undefined when it does not exist, is not open or the fence refuses it. */
  async fail(
    id: string,
    maxDeliveries: number,
    error: { code: string; message: string },
    shown: Record<string, unknown>,
    fence: ReportFence,
    timing: FailureTiming,
  ): Promise<FailedReport | undefined> {
    const [rows]: [FailedReport[], number] = await this.dataSource.query(
      TASK_STATEMENTS.fail,
      TASK_STATEMENTS.failParameters.values({
        id,
        maxDeliveries,
        code: error.code,
        message: error.message,
        tokenHash: fence.tokenHash,
        keyId: fence.keyId,
        digest: fence.digest,
        shown: JSON.stringify(shown),
        ...timing,
      }),
    );
    return rows[0];
  }

  /**
   * A heartbeat's answer; undefined for an unknown task. `accepted` false: the token is not the current
   * attempt's, or the task may not take a report.
   */
  async heartbeat(
    id: string,
    maxDeliveries: number,
    tokenHash: Buffer,
    extendSeconds: number,
    maxLeaseSeconds: number,
    progress: Record<string, unknown> | null,
  ): Promise<{ accepted: boolean; leaseExpiresAt: Date | null; cancelRequested: boolean; written: boolean } | undefined> {
    const rows = await this.dataSource.query(
      TASK_STATEMENTS.heartbeat,
      TASK_STATEMENTS.heartbeatParameters.values({
        id,
        maxDeliveries,
        tokenHash,
        extendSeconds,
        maxLeaseSeconds,
        progress: progress && JSON.stringify(progress),
      }),
    );
    return rows[0];
  }

  /** Why a fenced report changed nothing: how its token and digest relate to the task's attempts. */
  async reportStanding(id: string, maxDeliveries: number, tokenHash: Buffer | null): Promise<ReportStanding | undefined> {
    const p = REPORT_PARAMETERS.$;
    const rows: ReportStanding[] = await this.dataSource.query(
      `SELECT (${openForReport(p.maxDeliveries)}) AS open, lease_token_hash = ${p.tokenHash}::bytea AS current,
              encode(report_digest, 'hex') AS "currentReport", earlier.entry IS NOT NULL AS earlier,
              earlier.entry->>'report' AS "earlierReport"
         FROM insight_task
         LEFT JOIN LATERAL (SELECT e AS entry FROM jsonb_array_elements(attempt_log) e
                             WHERE e->>'tokenHash' = encode(${p.tokenHash}::bytea, 'hex') LIMIT 1) earlier ON true
        WHERE id = ${p.id}`,
      REPORT_PARAMETERS.values({ id, maxDeliveries, tokenHash }),
    );
    return rows[0];
  }

  /** The task as cancel left it; undefined when it does not exist or has ended. */
  async cancel(id: string, maxDeliveries: number): Promise<{ state: TaskState; errorCode: string | null; errorMessage: string | null } | undefined> {
    const [rows] = await this.dataSource.query(TASK_STATEMENTS.cancel, TASK_STATEMENTS.byIdParameters.values({ id, maxDeliveries }));
    return rows[0];
  }

  /** Whether the task was Failed and now waits again. */
  async retry(id: string, maxDeliveries: number): Promise<boolean> {
    return this.update(TASK_STATEMENTS.retry, TASK_STATEMENTS.byIdParameters.values({ id, maxDeliveries }));
  }

  /** TypeORM answers a bare UPDATE with `[rows, affectedCount]`. */
  private async update(sql: string, parameters: unknown[]): Promise<boolean> {
    const [, affected]: [unknown[], number] = await this.dataSource.query(sql, parameters);
    return affected > 0;
  }
}
