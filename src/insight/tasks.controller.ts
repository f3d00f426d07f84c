import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { RegisterTaskDto, TaskIdParamDto, TaskRegistrationView, TaskView } from './dto/task.dto.js';
import { TasksService } from './tasks.service.js';

@ApiTags('insight')
@Controller('insight/tasks')
export class TasksController {
  constructor(private readonly tasks: TasksService) {}

  @Post()
  @RequirePermission('tasks', 'Write')
  @ApiCreatedResponse({ type: TaskRegistrationView })
  register(@Body() form: RegisterTaskDto) {
    return this.tasks.register(form);
  }

  @Get(':task_id')
  @RequirePermission('tasks', 'Read')
  @ApiOkResponse({ type: TaskView })
  view(@Param() params: TaskIdParamDto) {
    return this.tasks.view(params);
  }
}
