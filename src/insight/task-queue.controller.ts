import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ClientGone } from '../common/http/long-poll.js';
import { CompleteTaskDto, FailTaskDto, TakeTasksDto, TaskQueueItemView } from './dto/task-queue.dto.js';
import { TaskQueueService } from './task-queue.service.js';

@ApiTags('insight')
@Controller('insight/task-queue')
export class TaskQueueController {
  constructor(private readonly queue: TaskQueueService) {}

  @Post('executing-tasks')
  @HttpCode(200)
  @RequirePermission('task-queue', 'Write')
  @ApiOperation({
    summary: 'Take tasks to execute',
    description:
      'For executors: leases up to `limit` (1 to 1000) pending tasks, oldest first, and returns them. A leased task ' +
      'stays `Pending` but no other executor receives it until its lease (`TASK_LEASE_SECONDS`) runs out; then it ' +
      'can be taken again, and after `TASK_MAX_DELIVERIES` expired leases it fails with `DeliveryLimitExceeded`. ' +
      'Report each task with `completed-tasks` or `failed-tasks`. `[]` means nothing waits. With `wait` (0 to 60 seconds) an empty queue holds the request until a task ' +
      'can be taken (registered on any instance, or a lease ran out) or the wait runs out.',
  })
  @ApiOkResponse({ type: [TaskQueueItemView], description: 'The leased tasks, oldest first; `[]` when none wait.' })
  @ApiErrors({ 400: 'InvalidData: limit is not an integer from 1 to 1000, or wait not from 0 to 60.' })
  take(@Body() form: TakeTasksDto, @ClientGone() gone: AbortSignal) {
    return this.queue.take(form, gone);
  }

  @Post('completed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiOperation({
    summary: 'Report a task completed',
    description:
      'For executors: stores `result` `{type, keys, context}` for a task taken at least once and still `Pending` ' +
      '(even if its lease ran out): keys are normalised and the result is validated against the task\'s insight ' +
      'schema, then the task is `Completed`. The first report wins; a later one is 422 `InvalidState`.',
  })
  @ApiNoContentResponse({ description: 'Completed.' })
  @ApiErrors({
    400: 'InvalidData: a malformed report.',
    422: 'TaskNotFound, InvalidState, InvalidKeyFormat, InvalidKeySet, SchemaCheckFail (details: AbsoluteKeywordLocation, InstanceLocation, Message, errors).',
  })
  complete(@Body() form: CompleteTaskDto) {
    return this.queue.complete(form);
  }

  @Post('failed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiOperation({
    summary: 'Report a task failed',
    description:
      'For executors: marks a task taken at least once and still `Pending` as `Failed` with the executor\'s own ' +
      '`error` `{code, message}` (the service does not define these codes). The first report wins; a later one is ' +
      '422 `InvalidState`.',
  })
  @ApiNoContentResponse({ description: 'Failed.' })
  @ApiErrors({
    400: 'InvalidData: a malformed report.',
    422: 'TaskNotFound: no task has this id. InvalidState: not taken yet, or already reported.',
  })
  fail(@Body() form: FailTaskDto) {
    return this.queue.fail(form);
  }
}
