import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { ApiError } from '../common/errors/api-error.js';
import { inferObjectType, normalizeKeySet, type ObjectKey } from '../common/indicators/index.js';
import { decodeCursor, encodeCursor, timeIdCursorGuard } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../common/pagination/page.js';
import { UUID_PATTERN } from '../common/validation/uuid.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { FilesService } from '../filebox/files.service.js';
import { SchemaRegistryErrors } from '../schema-registry/schema-registry.errors.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import {
  DEFAULT_RESULT_MAX_AGE_SECONDS,
  type ListTasksQueryDto,
  type RegisterTaskDto,
  type TaskAttemptView,
  type TaskDetailView,
  type TaskIdParamDto,
  type TaskParamsView,
  type TaskRegistrationView,
  type TaskView,
} from './dto/task.dto.js';
import { attemptLimit, hasEndedWithLease, isLastLease } from './ended-lease.js';
import { deliveryLimitError, InsightErrors } from './insight.errors.js';
import { TaskAnnouncer } from './task-announcer.js';
import { CANCELLED_UNREPORTED } from './task-statements.js';
import { TaskParamsRow, TasksRepository, type NewTask, type TaskRow } from './tasks.repository.js';

const isoOf = (time: string | Date | null) => (time === null ? null : new Date(time).toISOString());

/** Every attempt, oldest first: those the log keeps, then the current one (its outcome read from the row). */
function attemptsOf(row: TaskRow): TaskAttemptView[] {
  const attempts = row.attemptLog.map((entry): TaskAttemptView => ({
    attempt: entry.attempt,
    executor: entry.executor,
    keyID: entry.keyID,
    takenAt: isoOf(entry.takenAt)!,
    endedAt: isoOf(entry.endedAt),
    outcome: entry.outcome as TaskAttemptView['outcome'],
    error: entry.error,
  }));
  const { current } = row;
  if (current.takenAt === null) return attempts;
  const ranOut = current.outcome === null && row.leaseExpired;
  attempts.push({
    attempt: row.deliveries,
    executor: current.executor,
    keyID: current.keyID,
    takenAt: isoOf(current.takenAt)!,
    endedAt: isoOf(ranOut ? row.leaseExpiresAt : current.endedAt),
    outcome: (current.outcome ?? (ranOut ? 'leaseExpired' : null)) as TaskAttemptView['outcome'],
    error: current.error,
  });
  return attempts;
}

/** The newest-first position: `t` the creation time to the microsecond (UTC), `i` the id. */
const isTaskCursor = timeIdCursorGuard(UUID_PATTERN);

const DEFAULT_PRIORITY = 3;
/** A deduplicating registration runs again only when an identical one won a race; three runs are plenty. */
const DEDUPE_RUNS = 3;

/**
 * What makes two tasks identical (extensions §16): the schema, the normalised keys as a set (sorted), and
 * the file's content (its SHA-256, not its id).
 */
function contentHash(schemaId: string, keys: ObjectKey[] | null, fileSha256: string | null): Buffer {
  const sorted = (keys ?? []).map((key) => [key.type, key.value]).sort((x, y) => (x.join('\u0000') < y.join('\u0000') ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([schemaId, sorted, fileSha256]))
    .digest();
}

/** The `params` of the task view and of queue items: absent parts are omitted, never null. */
export function paramsView(row: TaskParamsRow): TaskParamsView {
  return {
    schemaID: row.schemaId,
    ...(row.objectKeys !== null && { objectKeys: row.objectKeys }),
    ...(row.fileId !== null && { fileID: row.fileId }),
  };
}

/** Registration and the task view (decisions §9). */
@Injectable()
export class TasksService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tasks: TasksRepository,
    private readonly schemas: SchemaRegistryService,
    private readonly files: FilesService,
    private readonly announcer: TaskAnnouncer,
  ) {}

  /**
   * Checks in order: keys (format, then set), schema, file; nothing is stored unless all pass. With
   * `dedupe`, an identical task is answered instead (status 200 through `response`).
   */
  async register({ params, priority, maxAttempts, dedupe = 'none', maxAgeSeconds }: RegisterTaskDto, response?: Response): Promise<TaskRegistrationView> {
    const { schemaID, objectKeys, fileID } = params;
    if (objectKeys === undefined && fileID === undefined) throw InsightErrors.nothingToEnrich();
    if (maxAgeSeconds !== undefined && dedupe !== 'result') throw InsightErrors.maxAgeWithoutResult();
    // `objectKeys: []` beside a file means "no keys" (the SDK may send it); alone it is an empty key set.
    const keys = objectKeys !== undefined && (objectKeys.length > 0 || fileID === undefined) ? normalizeKeySet(inferObjectType(objectKeys), objectKeys) : null;
    const fileId = fileID?.toLowerCase() ?? null;
    const [schemaExists, fileSha256] = await Promise.all([this.schemas.exists('insight', schemaID), fileId === null ? null : this.fileSha256(fileId)]);
    if (!schemaExists) throw SchemaRegistryErrors.schemaNotFound('insight', schemaID);
    const task: NewTask = {
      schemaId: schemaID,
      objectKeys: keys,
      fileId,
      priority: priority ?? DEFAULT_PRIORITY,
      maxAttempts: maxAttempts ?? null,
      contentHash: contentHash(schemaID, keys, fileSha256),
    };
    if (dedupe === 'none') return this.registered(await this.tasks.insert(task), task);
    const maxAge = dedupe === 'result' ? (maxAgeSeconds ?? DEFAULT_RESULT_MAX_AGE_SECONDS) : null;
    // Each run sees every task committed before it; only a race with an identical insert makes another.
    for (let run = 0; run < DEDUPE_RUNS; run++) {
      const outcome = await this.tasks.insertUnlessIdentical(task, maxAge);
      if (outcome === undefined) continue;
      if (!outcome.deduplicated) return this.registered(outcome.id, task);
      response?.status(200);
      return { taskID: outcome.id, deduplicated: true };
    }
    throw InsightErrors.dedupeContended();
  }

  private registered(taskID: string, task: NewTask): TaskRegistrationView {
    this.announcer.registered(taskID, paramsView(task));
    return { taskID };
  }

  /** The file's SHA-256 (hex); 422 FileNotFound for an unknown file. */
  private async fileSha256(fileId: string): Promise<string> {
    const sha256 = await this.files.sha256Of(fileId);
    if (sha256 === null) throw InsightErrors.fileNotFound(fileId);
    return sha256;
  }

  /**
   * With `wait`, a Pending task is read again when it finishes (on any instance), within the wait. Its
   * attempts are shown when asked for (`attempts=true`): the product's client knows the view without them.
   */
  async view({ task_id }: TaskIdParamDto, waitSeconds = 0, gone?: AbortSignal, attempts?: unknown): Promise<TaskDetailView> {
    if (attempts !== undefined && attempts !== 'true' && attempts !== 'false') throw InsightErrors.attemptsFlag();
    const withAttempts = attempts === 'true';
    if (!UUID_PATTERN.test(task_id)) throw InsightErrors.taskViewNotFound(task_id);
    const id = task_id.toLowerCase();
    const { view } = await this.announcer.pollTask(
      id,
      { waitSeconds, gone, ready: ({ view }) => view.state !== 'Pending', changesAt: ({ changesAt }) => changesAt },
      async () => {
        const row = await this.tasks.find(id);
        if (!row) throw InsightErrors.taskViewNotFound(task_id);
        // A task on its last delivery (or cancelled) turns Failed when that lease ends, with no commit to announce it.
        const lastLease = row.leaseEndsInMs !== null && isLastLease(row, this.config.taskMaxDeliveries);
        return { view: this.detailOf(row, withAttempts), changesAt: lastLease ? Date.now() + row.leaseEndsInMs! : undefined };
      },
    );
    return view;
  }

  /** Tasks newest first, optionally in one state (as the view shows it). */
  async list(query: ListTasksQueryDto): Promise<PageResult<TaskView>> {
    const page = pageRequestOf(query);
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, isTaskCursor);
    const rows = await this.tasks.listPage(
      { state: query.state, errorCode: query.errorCode, schemaId: query.schemaID },
      after,
      page.limit + 1,
      this.config.pageMaxBytes,
      this.config.taskMaxDeliveries,
    );
    return keysetPage(
      rows,
      page.limit,
      (row) => encodeCursor({ t: row.createdAt, i: row.id }),
      (row) => this.viewOf(row),
    );
  }

  /**
   * Cancel (extensions §16): a waiting task fails `Cancelled` now; a leased one is asked to stop (it fails
   * `Cancelled` when its executor reports a failure or its lease ends; a result still completes it).
   */
  async cancel(params: TaskIdParamDto): Promise<TaskDetailView> {
    const id = this.knownId(params);
    const cancelled = await this.tasks.cancel(id, this.config.taskMaxDeliveries);
    if (!cancelled) throw await this.refused(params, InsightErrors.cannotCancel);
    if (cancelled.state === 'Failed') this.announcer.failed(id, { code: cancelled.errorCode!, message: cancelled.errorMessage! });
    return this.view(params);
  }

  /** Retry: a Failed task waits again with fresh attempts; its earlier ones stay in the view. */
  async retry(params: TaskIdParamDto): Promise<TaskDetailView> {
    const id = this.knownId(params);
    if (!(await this.tasks.retry(id, this.config.taskMaxDeliveries))) throw await this.refused(params, InsightErrors.cannotRetry);
    this.announcer.requeued();
    return this.view(params);
  }

  private knownId({ task_id }: TaskIdParamDto): string {
    if (!UUID_PATTERN.test(task_id)) throw InsightErrors.taskViewNotFound(task_id);
    return task_id.toLowerCase();
  }

  /** Why cancel or retry changed nothing: no such task (404), or it is in the wrong state (422). */
  private async refused(params: TaskIdParamDto, error: (taskId: string) => ApiError): Promise<ApiError> {
    await this.view(params);
    return error(params.task_id.toLowerCase());
  }

  private detailOf(row: TaskRow, withAttempts: boolean): TaskDetailView {
    const view: TaskDetailView = this.viewOf(row);
    if (view.state === 'Pending' && row.cancelRequested) view.cancelRequested = true;
    if (view.state === 'Pending' && row.progress !== null) view.progress = row.progress as TaskDetailView['progress'];
    if (withAttempts) view.attempts = attemptsOf(row);
    return view;
  }

  private viewOf(row: TaskRow): TaskView {
    const view: TaskView = { id: row.id, params: paramsView(row), state: row.state };
    // Past its last allowed lease (or cancelled and past its lease) the task is Failed, whether or not a take
    // has recorded it yet; the error names the task's own attempt limit, as the take that records it will.
    if (hasEndedWithLease(row, this.config.taskMaxDeliveries)) {
      const error = row.cancelRequested ? { ...CANCELLED_UNREPORTED } : deliveryLimitError(attemptLimit(row, this.config.taskMaxDeliveries));
      return { ...view, state: 'Failed', error };
    }
    if (row.result !== null) view.result = row.result;
    if (row.errorCode !== null) {
      view.error = { code: row.errorCode, message: row.errorMessage ?? '' };
      // Failed by a transient report: only the last attempt's does that (AttemptsExhausted), and it stays current.
      if (row.current.outcome === 'transient' && row.current.error !== null) view.error.lastError = row.current.error;
    }
    return view;
  }
}
