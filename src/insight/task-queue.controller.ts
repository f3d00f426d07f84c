import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { CompleteTaskDto, FailTaskDto, TakeTasksDto, TaskQueueItemView } from './dto/task-queue.dto.js';
import { TaskQueueService } from './task-queue.service.js';

@ApiTags('insight')
@Controller('insight/task-queue')
export class TaskQueueController {
  constructor(private readonly queue: TaskQueueService) {}

  @Post('executing-tasks')
  @HttpCode(200)
  @RequirePermission('task-queue', 'Write')
  @ApiOkResponse({ type: [TaskQueueItemView], description: 'The leased tasks, oldest first; `[]` when none wait.' })
  @ApiErrors({ 400: 'InvalidData: limit is not an integer from 1 to 1000.' })
  take(@Body() form: TakeTasksDto) {
    return this.queue.take(form);
  }

  @Post('completed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiNoContentResponse()
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
  @ApiNoContentResponse()
  @ApiErrors({ 400: 'InvalidData: a malformed report.', 422: 'TaskNotFound, InvalidState.' })
  fail(@Body() form: FailTaskDto) {
    return this.queue.fail(form);
  }
}
