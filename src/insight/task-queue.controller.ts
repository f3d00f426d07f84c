import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal, RequirePermission } from '../common/guard/access.decorators.js';
import type { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ClientGone } from '../common/http/long-poll.js';
import { CompleteTaskDto, FailTaskDto, HeartbeatDto, HeartbeatView, TakeTasksDto, TaskQueueItemView } from './dto/task-queue.dto.js';
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
      'can be taken (registered on any instance, or a lease ran out) or the wait runs out. Fleet executors add ' +
      '`schemas` (only tasks of those result schemas) and/or `executor` (their name, recorded per attempt); their ' +
      'items then carry `attempt`, `leaseToken` and `leaseExpiresAt`: report and heartbeat with the token. Higher ' +
      'priority is served first; back-offs, paused schemas and quotas hold tasks back, never fail them.',
  })
  @ApiOkResponse({ type: [TaskQueueItemView], description: 'The leased tasks, by priority then age; `[]` when none wait.' })
  @ApiErrors({ 400: 'InvalidData: limit is not an integer from 1 to 1000, wait not from 0 to 60, a malformed schemas or executor.' })
  take(@Body() form: TakeTasksDto, @Principal() principal: PrincipalType, @ClientGone() gone: AbortSignal) {
    return this.queue.take(form, principal, gone);
  }

  @Post('completed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiOperation({
    summary: 'Report a task completed',
    description:
      'For executors: stores `result` `{type, keys, context}` for a task taken at least once and still `Pending` ' +
      "(even if its lease ran out): keys are normalised and the result is validated against the task's insight " +
      'schema, then the task is `Completed`. The first report wins; a later one is 422 `InvalidState`. With ' +
      '`leaseToken`, only the current attempt may report (409 `LeaseLost` otherwise, also once the task ended); ' +
      'without it, the report is refused (409 `LeaseLost`) while another key holds a live lease. Replaying the ' +
      'accepted report with its token answers the same and changes nothing; a different one is 422 `InvalidState`.',
  })
  @ApiNoContentResponse({ description: 'Completed.' })
  @ApiErrors({
    400: 'InvalidData: a malformed report or leaseToken.',
    409: "LeaseLost: the token is not the current attempt's, or (without a token) another key holds the lease.",
    422: 'TaskNotFound, InvalidState, InvalidKeyFormat, InvalidKeySet, SchemaCheckFail (details: AbsoluteKeywordLocation, InstanceLocation, Message, errors).',
  })
  complete(@Body() form: CompleteTaskDto, @Principal() principal: PrincipalType) {
    return this.queue.complete(form, principal);
  }

  @Post('failed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiOperation({
    summary: 'Report a task failed',
    description:
      "For executors: marks a task taken at least once and still `Pending` as `Failed` with the executor's own " +
      '`error` `{code, message}` (the service does not define these codes). The first report wins; a later one is ' +
      '422 `InvalidState`. `error.kind`: `permanent` (default) fails the task; `transient` puts it back after a ' +
      'back-off of min(TASK_RETRY_MAX_SECONDS, TASK_RETRY_BASE_SECONDS × 2^(attempt−1)) × [0.5, 1] until its ' +
      'attempts are used (then `Failed` `AttemptsExhausted`); `rateLimited` (with `retryAfterSeconds`) puts it back ' +
      'and holds every task of its schema that long, no attempt used. A cancelled task fails `Cancelled` whatever ' +
      'the kind. Fencing and replays as for `completed-tasks`.',
  })
  @ApiNoContentResponse({ description: 'Failed, or back in the queue.' })
  @ApiErrors({
    400: 'InvalidData: a malformed report or leaseToken, or retryAfterSeconds without rateLimited (or missing with it).',
    409: "LeaseLost: the token is not the current attempt's, or (without a token) another key holds the lease.",
    422: 'TaskNotFound: no task has this id. InvalidState: not taken yet, already reported, or a different report with the same token.',
  })
  fail(@Body() form: FailTaskDto, @Principal() principal: PrincipalType) {
    return this.queue.fail(form, principal);
  }

  @Post('heartbeats')
  @HttpCode(200)
  @RequirePermission('task-queue', 'Write')
  @ApiOperation({
    summary: 'Extend a lease, report progress',
    description:
      "For executors: the attempt's lease now runs `extendSeconds` (1 to 3600, default TASK_LEASE_SECONDS) from now, " +
      'but never past its take + TASK_MAX_LEASE_SECONDS (the answer shows the capped end). `progress` `{percent, ' +
      'message}` shows in the task view. The current token after its lease ran out, nobody having taken the task since, ' +
      'revives the lease. `cancelRequested: true`: stop and report a failure (the task ends `Cancelled`). Send one ' +
      'about every third of the lease: while more than half of it is left, a heartbeat without progress writes nothing.',
  })
  @ApiOkResponse({ type: HeartbeatView })
  @ApiErrors({
    400: 'InvalidData: a malformed taskID, leaseToken, extendSeconds or progress.',
    409: "LeaseLost: the token is not the current attempt's (the task was taken again).",
    422: 'TaskNotFound: no task has this id. InvalidState: the task ended (reported, cancelled, or its last lease ran out).',
  })
  heartbeat(@Body() form: HeartbeatDto, @Principal() principal: PrincipalType) {
    return this.queue.heartbeat(form, principal);
  }
}
