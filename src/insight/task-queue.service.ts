import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import type { Principal } from '../common/guard/access.js';
import { waitSecondsOf } from '../common/http/long-poll.js';
import { normalizeKeySet } from '../common/indicators/index.js';
import { Metrics } from '../common/metrics/metrics.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import type { CompleteTaskDto, FailTaskDto, HeartbeatDto, HeartbeatView, TakeTasksDto, TaskQueueItemView } from './dto/task-queue.dto.js';
import type { TaskResult } from './entities/task.entity.js';
import { InsightErrors } from './insight.errors.js';
import { heartbeatRefusal, reportRefusal, type ReportRefusal } from './report-refusal.js';
import { TaskAnnouncer } from './task-announcer.js';
import { TasksRepository, type ReportFence } from './tasks.repository.js';
import { paramsView } from './tasks.service.js';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();

/** The fence of a report: its token's hash, its key, and the digest that recognises a replay of it. */
function fenceOf(leaseToken: string | undefined, principal: Principal, report: unknown): ReportFence {
  return {
    tokenHash: leaseToken === undefined ? null : sha256(Buffer.from(leaseToken, 'hex')),
    keyId: principal.keyId,
    digest: sha256(JSON.stringify(report)),
  };
}

/** The error of each refusal (report-refusal.ts); a replay is answered as before, with none. */
const REFUSAL_ERRORS: Record<Exclude<ReportRefusal, 'replay'>, (taskId: string) => ApiError> = {
  taskNotFound: InsightErrors.taskNotFound,
  invalidState: InsightErrors.invalidState,
  otherReport: InsightErrors.otherReport,
  leaseLost: (taskId) => InsightErrors.leaseLost(taskId, true),
  leasedByAnotherKey: (taskId) => InsightErrors.leaseLost(taskId, false),
};

/** What `reportableSchema` answers for a report that was accepted already. */
const REPLAYED = '';

/** Bound on the task → schema memo; beyond it the oldest entries go (a miss costs one indexed read). */
const SCHEMA_MEMO_SIZE = 100_000;

/** The executor side of decisions §9: leases, reports and the delivery limit. */
@Injectable()
export class TaskQueueService {
  /**
   * The schema of each task this instance handed out. A task's schema never changes, so the memo cannot
   * go stale; it lets a completion be validated and stored without first reading the task.
   */
  private readonly schemaOfTask = new Map<string, string>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tasks: TasksRepository,
    private readonly schemas: SchemaRegistryService,
    private readonly announcer: TaskAnnouncer,
    private readonly metrics: Metrics,
  ) {}

  /**
   * With `wait`, an empty take is repeated when a task is registered (on any instance) or a running lease
   * ends, until one can be taken or the wait runs out. Each try is one atomic take, so racing executors
   * never share a task.
   */
  async take({ limit, wait, schemas, executor }: TakeTasksDto, principal: Principal, gone?: AbortSignal): Promise<TaskQueueItemView[]> {
    const waitSeconds = waitSecondsOf(wait);
    const taker = { keyId: principal.keyId, executor: executor ?? null, schemas: schemas ?? null };
    // The product's client knows three fields per item; an executor using the fleet protocol gets the attempt's.
    const fleet = executor !== undefined || schemas !== undefined;
    const { rows } = await this.announcer.pollQueue(
      { waitSeconds, gone, ready: ({ rows }) => rows.length > 0, changesAt: ({ takeableAt }) => takeableAt },
      async () => {
        const { taken, failed } = await this.tasks.take(limit, this.config.taskMaxDeliveries, this.config.taskLeaseSeconds, taker);
        for (const { id, error } of failed) this.announcer.failed(id, error);
        // Only a waiting take needs to know when the next lease ends; a plain one stays one statement.
        const inMs = taken.length === 0 && waitSeconds > 0 ? await this.tasks.nextTakeableInMs(this.config.taskMaxDeliveries) : null;
        return { rows: taken, takeableAt: inMs === null ? undefined : Date.now() + inMs };
      },
    );
    for (const row of rows) this.memoize(row.id, row.schemaId);
    this.metrics.tasksTaken.inc(rows.length);
    return rows.map((row) => {
      const item: TaskQueueItemView = { id: row.id, createdAt: row.createdAt, params: paramsView(row) };
      return fleet ? { ...item, attempt: row.attempt, leaseToken: row.leaseToken, leaseExpiresAt: row.leaseExpiresAt } : item;
    });
  }

  /**
   * Refusals in order: TaskNotFound, InvalidState or LeaseLost (fencing), then the result checks (key format,
   * key set, schema). A replay of the accepted report answers as it did and changes nothing.
   */
  async complete({ taskID, leaseToken, result }: CompleteTaskDto, principal: Principal): Promise<void> {
    const id = taskID.toLowerCase();
    const fence = fenceOf(leaseToken, principal, { result });
    const memoized = this.schemaOfTask.get(id);
    const schemaId = memoized ?? (await this.reportableSchema(id, fence));
    if (schemaId === REPLAYED) return;
    let normalized: TaskResult;
    try {
      normalized = { type: result.type, keys: normalizeKeySet(result.type, result.keys), context: result.context };
      await this.schemas.validate('insight', schemaId, normalized);
    } catch (error) {
      // The memo skipped the state check; a task that may not take a report says so before its result is judged.
      if (memoized !== undefined && error instanceof ApiError && (await this.reportableSchema(id, fence)) === REPLAYED) return;
      throw error;
    }
    const stored = await this.tasks.complete(id, this.config.taskMaxDeliveries, normalized, fence);
    this.schemaOfTask.delete(id);
    if (!stored) return this.refuseUnlessReplay(id, fence);
    this.announcer.completed(id, normalized);
    this.metrics.tasksCompleted.inc();
  }

  /**
   * `permanent` fails the task; `transient` and `rateLimited` put it back in the queue (after a back-off,
   * or `retryAfterSeconds` for its whole schema) unless its attempts are used up or it was cancelled.
   */
  async fail({ taskID, leaseToken, error }: FailTaskDto, principal: Principal): Promise<void> {
    const kind = error.kind ?? 'permanent';
    if ((kind === 'rateLimited') !== (error.retryAfterSeconds !== undefined)) throw InsightErrors.retryAfterRule();
    const id = taskID.toLowerCase();
    const fence = fenceOf(leaseToken, principal, { error });
    const ended = await this.tasks.fail(id, this.config.taskMaxDeliveries, error, { code: error.code, message: error.message }, fence, {
      kind,
      retryBaseSeconds: this.config.taskRetryBaseSeconds,
      retryMaxSeconds: this.config.taskRetryMaxSeconds,
      jitter: 0.5 + Math.random() / 2,
      retryAfterSeconds: error.retryAfterSeconds ?? null,
    });
    this.schemaOfTask.delete(id);
    if (!ended) return this.refuseUnlessReplay(id, fence);
    if (ended.state === 'Pending') {
      this.announcer.requeued();
      return;
    }
    this.announcer.failed(id, { code: ended.errorCode!, message: ended.errorMessage! });
    this.metrics.tasksFailed.inc();
  }

  /**
   * Extends the current attempt's lease (written at most once per half lease unless progress comes with it)
   * and tells the executor whether the task was cancelled.
   */
  async heartbeat({ taskID, leaseToken, extendSeconds, progress }: HeartbeatDto, principal: Principal): Promise<HeartbeatView> {
    const id = taskID.toLowerCase();
    const fence = fenceOf(leaseToken, principal, null);
    const beat = await this.tasks.heartbeat(
      id,
      this.config.taskMaxDeliveries,
      fence.tokenHash!,
      extendSeconds ?? this.config.taskLeaseSeconds,
      this.config.taskMaxLeaseSeconds,
      progress === undefined ? null : { percent: progress.percent, ...(progress.message !== undefined && { message: progress.message }) },
    );
    if (!beat) throw InsightErrors.taskNotFound(id);
    if (!beat.accepted) {
      const standing = await this.tasks.reportStanding(id, this.config.taskMaxDeliveries, fence.tokenHash);
      throw REFUSAL_ERRORS[heartbeatRefusal(standing)](id);
    }
    return { leaseExpiresAt: beat.leaseExpiresAt!, cancelRequested: beat.cancelRequested };
  }

  /** The task's schema when it may take a report now (REPLAYED: this report was accepted already). */
  private async reportableSchema(id: string, fence: ReportFence): Promise<string> {
    const target = await this.tasks.reportTarget(id, this.config.taskMaxDeliveries);
    if (!target) throw InsightErrors.taskNotFound(id);
    if (!target.open) await this.refuseUnlessReplay(id, fence);
    return target.open ? target.schemaId : REPLAYED;
  }

  private async refuseUnlessReplay(id: string, fence: ReportFence): Promise<void> {
    const refusal = await this.refusal(id, fence);
    if (refusal) throw refusal;
  }

  /** Why a fenced report changed nothing (reportRefusal); null: it is a replay of the accepted one, answered as before. */
  private async refusal(id: string, fence: ReportFence): Promise<ApiError | null> {
    const standing = await this.tasks.reportStanding(id, this.config.taskMaxDeliveries, fence.tokenHash);
    const refusal = reportRefusal(standing, { withToken: fence.tokenHash !== null, digest: fence.digest.toString('hex') });
    return refusal === 'replay' ? null : REFUSAL_ERRORS[refusal](id);
  }

  private memoize(id: string, schemaId: string): void {
    if (this.schemaOfTask.size >= SCHEMA_MEMO_SIZE) {
      this.schemaOfTask.delete(this.schemaOfTask.keys().next().value!);
    }
    this.schemaOfTask.set(id, schemaId);
  }
}
