import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { RegisterTaskDto, TaskIdParamDto, TaskRegistrationView, TaskView } from './dto/task.dto.js';
import { TasksService } from './tasks.service.js';

@ApiTags('insight')
@Controller('insight/tasks')
export class TasksController {
  constructor(private readonly tasks: TasksService) {}

  @Post()
  @RequirePermission('tasks', 'Write')
  @ApiCreatedResponse({ type: TaskRegistrationView })
  @ApiErrors({
    400: 'InvalidData: a malformed form, or neither objectKeys nor fileID.',
    422: 'InvalidKeyFormat, InvalidKeySet, SchemaNotFound, FileNotFound.',
    429: 'LimitExceeded (with Retry-After).',
  })
  register(@Body() form: RegisterTaskDto) {
    return this.tasks.register(form);
  }

  @Get(':task_id')
  @RequirePermission('tasks', 'Read')
  @ApiOkResponse({ type: TaskView })
  @ApiErrors({ 404: 'Unknown (or malformed) task id.' })
  view(@Param() params: TaskIdParamDto) {
    return this.tasks.view(params);
  }
}
