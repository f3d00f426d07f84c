import { Inject, Injectable } from '@nestjs/common';
import { inferObjectType, normalizeKeySet } from '../common/indicators/index.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { FilesService } from '../filebox/files.service.js';
import { SchemaRegistryErrors } from '../schema-registry/schema-registry.errors.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';
import type { RegisterTaskDto, TaskIdParamDto, TaskParamsView, TaskRegistrationView, TaskView } from './dto/task.dto.js';
import { UUID_PATTERN } from './dto/task.dto.js';
import { deliveryLimitError, InsightErrors } from './insight.errors.js';
import { TaskParamsRow, TasksRepository } from './tasks.repository.js';

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
    const taskID = await this.tasks.insert({ schemaId: schemaID, objectKeys: keys, fileId });
    return { taskID };
  }

  async view({ task_id }: TaskIdParamDto): Promise<TaskView> {
    const row = UUID_PATTERN.test(task_id) ? await this.tasks.find(task_id) : undefined;
    if (!row) throw InsightErrors.taskViewNotFound(task_id);
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
