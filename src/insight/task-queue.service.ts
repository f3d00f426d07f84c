import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { waitSecondsOf } from '../common/http/long-poll.js';
import { Metrics } from '../common/metrics/metrics.js';
import { normalizeKeySet } from '../common/indicators/index.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import type { CompleteTaskDto, FailTaskDto, TakeTasksDto, TaskQueueItemView } from './dto/task-queue.dto.js';
import type { TaskResult } from './entities/task.entity.js';
import { deliveryLimitError, InsightErrors } from './insight.errors.js';
import { TaskAnnouncer } from './task-announcer.js';
import { paramsView } from './tasks.service.js';
import { TasksRepository } from './tasks.repository.js';

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
  async take({ limit, wait }: TakeTasksDto, gone?: AbortSignal): Promise<TaskQueueItemView[]> {
    const waitSeconds = waitSecondsOf(wait);
    const { rows } = await this.announcer.pollQueue(
      { waitSeconds, gone, ready: ({ rows }) => rows.length > 0, changesAt: ({ takeableAt }) => takeableAt },
      async () => {
        const { taken, failed } = await this.tasks.take(limit, this.config.taskMaxDeliveries, this.config.taskLeaseSeconds);
        for (const id of failed) this.announcer.failed(id, deliveryLimitError(this.config.taskMaxDeliveries));
        // Only a waiting take needs to know when the next lease ends; a plain one stays one statement.
        const inMs = taken.length === 0 && waitSeconds > 0 ? await this.tasks.nextTakeableInMs(this.config.taskMaxDeliveries) : null;
        return { rows: taken, takeableAt: inMs === null ? undefined : Date.now() + inMs };
      },
    );
    for (const row of rows) this.memoize(row.id, row.schemaId);
    this.metrics.tasksTaken.inc(rows.length);
    return rows.map((row) => ({ id: row.id, createdAt: row.createdAt, params: paramsView(row) }));
  }

  /** Refusals in order: TaskNotFound, InvalidState, then the result checks (key format, key set, schema). */
  async complete({ taskID, result }: CompleteTaskDto): Promise<void> {
    const id = taskID.toLowerCase();
    const memoized = this.schemaOfTask.get(id);
    const schemaId = memoized ?? (await this.reportableSchema(id));
    let normalized: TaskResult;
    try {
      normalized = { type: result.type, keys: normalizeKeySet(result.type, result.keys), context: result.context };
      await this.schemas.validate('insight', schemaId, normalized);
    } catch (error) {
      // The memo skipped the state check; a task that may not take a report says so before its result is judged.
      if (memoized !== undefined && error instanceof ApiError) await this.reportableSchema(id);
      throw error;
    }
    const stored = await this.tasks.complete(id, this.config.taskMaxDeliveries, normalized);
    this.schemaOfTask.delete(id);
    if (!stored) throw await this.refusal(id);
    this.announcer.completed(id, normalized);
    this.metrics.tasksCompleted.inc();
  }

  async fail({ taskID, error }: FailTaskDto): Promise<void> {
    const id = taskID.toLowerCase();
    const stored = await this.tasks.fail(id, this.config.taskMaxDeliveries, error);
    this.schemaOfTask.delete(id);
    if (!stored) throw await this.refusal(id);
    this.announcer.failed(id, { code: error.code, message: error.message });
    this.metrics.tasksFailed.inc();
  }

  /** The task's schema when it may take a report now; TaskNotFound or InvalidState otherwise. */
  private async reportableSchema(id: string): Promise<string> {
    const target = await this.tasks.reportTarget(id, this.config.taskMaxDeliveries);
    if (!target) throw InsightErrors.taskNotFound(id);
    if (!target.open) throw InsightErrors.invalidState(id);
    return target.schemaId;
  }

  /** Why a conditional report changed nothing: the task is unknown, or not open for a report. */
  private async refusal(id: string): Promise<ApiError> {
    return (await this.tasks.exists(id)) ? InsightErrors.invalidState(id) : InsightErrors.taskNotFound(id);
  }

  private memoize(id: string, schemaId: string): void {
    if (this.schemaOfTask.size >= SCHEMA_MEMO_SIZE) {
      this.schemaOfTask.delete(this.schemaOfTask.keys().next().value!);
    }
    this.schemaOfTask.set(id, schemaId);
  }
}
