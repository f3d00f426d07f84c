import { Inject, Injectable } from '@nestjs/common';
import { inferObjectType, normalizeKeySet } from '../common/indicators/index.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { FilesService } from '../filebox/files.service.js';
import { SchemaRegistryErrors } from '../schema-registry/schema-registry.errors.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { keysetPage, type PageResult, pageRequestOf } from '../common/pagination/page.js';
import type {
  ListTasksQueryDto,
  RegisterTaskDto,
  TaskIdParamDto,
  TaskParamsView,
  TaskRegistrationView,
  TaskView,
} from './dto/task.dto.js';
import { UUID_PATTERN } from './dto/task.dto.js';
import { deliveryLimitError, InsightErrors } from './insight.errors.js';
import { TaskAnnouncer } from './task-announcer.js';
import { TaskParamsRow, type TaskRow, TasksRepository } from './tasks.repository.js';

/** The newest-first position: `t` the creation time to the microsecond (UTC), `i` the id. */
function isTaskCursor(value: unknown): value is { t: string; i: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length !== 2) return false;
  const { t, i } = value as { t?: unknown; i?: unknown };
  return (
    typeof t === 'string' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(t) &&
    !Number.isNaN(Date.parse(t)) &&
    typeof i === 'string' &&
    UUID_PATTERN.test(i)
  );
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

  /** Checks in order: keys (format, then set), schema, file; nothing is stored unless all pass. */
  async register({ params }: RegisterTaskDto): Promise<TaskRegistrationView> {
    const { schemaID, objectKeys, fileID } = params;
    if (objectKeys === undefined && fileID === undefined) throw InsightErrors.nothingToEnrich();
    // `objectKeys: []` beside a file means "no keys" (the SDK may send it); alone it is an empty key set.
    const keys =
      objectKeys !== undefined && (objectKeys.length > 0 || fileID === undefined)
        ? normalizeKeySet(inferObjectType(objectKeys), objectKeys)
        : null;
    const fileId = fileID?.toLowerCase() ?? null;
    const [schemaExists, fileExists] = await Promise.all([
      this.schemas.exists('insight', schemaID),
      fileId === null || this.files.exists(fileId),
    ]);
    if (!schemaExists) throw SchemaRegistryErrors.schemaNotFound('insight', schemaID);
    if (!fileExists) throw InsightErrors.fileNotFound(fileId!);
    const task = { schemaId: schemaID, objectKeys: keys, fileId };
    const taskID = await this.tasks.insert(task);
    this.announcer.registered(taskID, paramsView(task));
    return { taskID };
  }

  /** With `wait`, a Pending task is read again when it finishes (on any instance), within the wait. */
  async view({ task_id }: TaskIdParamDto, waitSeconds = 0, gone?: AbortSignal): Promise<TaskView> {
    if (!UUID_PATTERN.test(task_id)) throw InsightErrors.taskViewNotFound(task_id);
    const id = task_id.toLowerCase();
    const { view } = await this.announcer.pollTask(
      id,
      { waitSeconds, gone, ready: ({ view }) => view.state !== 'Pending', changesAt: ({ changesAt }) => changesAt },
      async () => {
        const row = await this.tasks.find(id);
        if (!row) throw InsightErrors.taskViewNotFound(task_id);
        // A task on its last delivery turns Failed when that lease ends, with no commit to announce it.
        const lastLease = row.leaseEndsInMs !== null && row.deliveries >= this.config.taskMaxDeliveries;
        return { view: this.viewOf(row), changesAt: lastLease ? Date.now() + row.leaseEndsInMs! : undefined };
      },
    );
    return view;
  }

  /** Tasks newest first, optionally in one state (as the view shows it). */
  async list(query: ListTasksQueryDto): Promise<PageResult<TaskView>> {
    const page = pageRequestOf(query);
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, isTaskCursor);
    const rows = await this.tasks.listPage(
      query.state,
      after,
      page.limit + 1,
      this.config.pageMaxBytes,
      this.config.taskMaxDeliveries,
    );
    return keysetPage(rows, page.limit, (row) => encodeCursor({ t: row.createdAt, i: row.id }), (row) => this.viewOf(row));
  }

  private viewOf(row: TaskRow): TaskView {
    const view: TaskView = { id: row.id, params: paramsView(row), state: row.state };
    // Past its last allowed lease the task is Failed, whether or not a take has recorded it yet.
    if (row.state === 'Pending' && row.leaseExpired && row.deliveries >= this.config.taskMaxDeliveries) {
      return { ...view, state: 'Failed', error: deliveryLimitError(this.config.taskMaxDeliveries) };
    }
    if (row.result !== null) view.result = row.result;
    if (row.errorCode !== null) view.error = { code: row.errorCode, message: row.errorMessage ?? '' };
    return view;
  }
}
