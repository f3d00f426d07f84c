import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ApiWaitQuery, ClientGone, WaitSeconds } from '../common/http/long-poll.js';
import { LINK_HEADER } from '../schema-registry/dto/schema.dto.js';
import { ListTasksQueryDto, RegisterTaskDto, TaskDetailView, TaskIdParamDto, TaskRegistrationView, TaskView } from './dto/task.dto.js';
import { TasksService } from './tasks.service.js';

@ApiTags('insight')
@Controller('insight/tasks')
export class TasksController {
  constructor(private readonly tasks: TasksService) {}

  @Post()
  @RequirePermission('tasks', 'Write')
  @ApiOperation({
    summary: 'Register an enrichment task',
    description:
      'Asks for an enrichment: `params` names the insight schema the result must satisfy (`schemaID`) and what ' +
      'to enrich, the keys of one object (`objectKeys`, its type inferred: hash keys mean a `File`) and/or a ' +
      'stored file (`fileID`). The task starts `Pending` and waits in the queue for an executor. A key with a ' +
      'daily limit on this operation gets 429 `LimitExceeded` once it is used up. Options beside `params`: `priority` ' +
      '(1 highest to 5, default 3), `maxAttempts` (1 to 20), `dedupe` (`none`, `inflight`: an identical unfinished task ' +
      'is answered with 200 and `deduplicated: true` instead of a new one, exactly one under concurrent identical ' +
      'registrations; `result`: also one completed within `maxAgeSeconds`, default 86400).',
  })
  @ApiCreatedResponse({ type: TaskRegistrationView })
  @ApiOkResponse({ type: TaskRegistrationView, description: 'Deduplicated: the identical task, `deduplicated: true`.' })
  @ApiErrors({
    400: 'InvalidData: a malformed form or option, neither objectKeys nor fileID, or maxAgeSeconds without dedupe result.',
    422: 'InvalidKeyFormat, InvalidKeySet: bad object keys. SchemaNotFound: no such insight schema. FileNotFound: no such file.',
  })
  register(@Body() form: RegisterTaskDto, @Res({ passthrough: true }) response: Response) {
    return this.tasks.register(form, response);
  }

  @Get()
  @RequirePermission('tasks', 'Read')
  @ApiOperation({
    summary: 'List tasks, newest first',
    description:
      'Lists the tasks a key with Read on `tasks` may read (all of them), newest first, each as `GET ' +
      '/insight/tasks/{task_id}` shows it. `state=Pending|Completed|Failed` keeps the tasks in that state (a task past ' +
      'its last delivery counts as Failed). A page is a bare array; the next page, when there is one, is in ' +
      '`Link: <...>; rel="next"` and keeps the filter. A task registered while you page appears on a new first ' +
      'page, not on later pages. No total count is given. `errorCode` keeps the failed tasks with that code (dead ' +
      "letters: `AttemptsExhausted`, `DeliveryLimitExceeded`, `Cancelled`, or an executor's own), `schemaID` the tasks of one schema.",
  })
  @ApiOkResponse({ type: [TaskView], headers: LINK_HEADER, description: 'A page; the next page is in `Link: rel="next"`.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: an unknown state, a malformed errorCode, schemaID, cursor or limit.' })
  list(@Query() query: ListTasksQueryDto) {
    return this.tasks.list(query);
  }

  @Get(':task_id')
  @RequirePermission('tasks', 'Read')
  @ApiOperation({
    summary: 'Get a task',
    description:
      'Returns the task with its `params` and `state`: `Pending` (waiting or being executed), `Completed` with the ' +
      "normalised `result`, or `Failed` with the executor's `error` `{code, message}`; a task whose leases ran out " +
      '`TASK_MAX_DELIVERIES` times fails with code `DeliveryLimitExceeded`. Poll it until the state is final, or pass `wait` (0 to 60 seconds): a Pending task then holds the ' +
      'request until it is Completed or Failed (on any instance) or the wait runs out. A task cancelled while leased ' +
      'shows `cancelRequested: true`, a running attempt its last heartbeat `progress`; `attempts=true` adds every ' +
      'attempt (executor, key, times, outcome, error), oldest first.',
  })
  @ApiWaitQuery()
  @ApiQuery({ name: 'attempts', required: false, schema: { type: 'boolean', default: false }, description: 'Add `attempts` to the view.' })
  @ApiOkResponse({ type: TaskDetailView })
  @ApiErrors({
    400: 'InvalidQueryArgument: wait not from 0 to 60, attempts not true or false.',
    404: 'NotFound: no task has this id (or the id is not a UUID).',
  })
  view(@Param() params: TaskIdParamDto, @WaitSeconds() wait: number, @ClientGone() gone: AbortSignal, @Query('attempts') attempts?: unknown) {
    return this.tasks.view(params, wait, gone, attempts);
  }

  @Post(':task_id/cancel')
  @HttpCode(200)
  @RequirePermission('tasks', 'Write')
  @ApiOperation({
    summary: 'Cancel a task',
    description:
      'A waiting task fails at once with code `Cancelled`. A leased one stays `Pending` with `cancelRequested: true` ' +
      '(its executor learns it on its next heartbeat) and fails `Cancelled` when its executor reports a failure of any ' +
      'kind or its lease ends; a result reported meanwhile still completes it. Answers the task view.',
  })
  @ApiOkResponse({ type: TaskDetailView })
  @ApiErrors({ 404: 'NotFound: no task has this id.', 422: 'InvalidState: the task is Completed or Failed.' })
  cancel(@Param() params: TaskIdParamDto) {
    return this.tasks.cancel(params);
  }

  @Post(':task_id/retry')
  @HttpCode(200)
  @RequirePermission('tasks', 'Write')
  @ApiOperation({
    summary: 'Retry a failed task',
    description:
      'A `Failed` task (a dead letter: find them with `GET /insight/tasks?errorCode=...`) goes back to the queue with ' +
      'fresh attempts counting from 1; its earlier attempts stay in the view (`attempts=true`). Answers the task view.',
  })
  @ApiOkResponse({ type: TaskDetailView })
  @ApiErrors({ 404: 'NotFound: no task has this id.', 422: 'InvalidState: the task is not Failed.' })
  retry(@Param() params: TaskIdParamDto) {
    return this.tasks.retry(params);
  }
}
