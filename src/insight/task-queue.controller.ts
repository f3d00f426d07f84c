import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
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
  take(@Body() form: TakeTasksDto) {
    return this.queue.take(form);
  }

  @Post('completed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiNoContentResponse()
  complete(@Body() form: CompleteTaskDto) {
    return this.queue.complete(form);
  }

  @Post('failed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiNoContentResponse()
  fail(@Body() form: FailTaskDto) {
    return this.queue.fail(form);
  }
}
