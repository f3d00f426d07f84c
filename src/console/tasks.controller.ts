import { Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleAccess, type ConsoleRequest } from './console-http.js';
import { TasksScreen } from './tasks.screen.js';
import type { Screen } from './views/layout.js';
import { registerTaskView } from './views/tasks.view.js';

/** Tasks: newest first by state, one task's attempts, progress, result or error, cancel and retry, and registration. */
@ConsoleController('tasks')
export class TasksController {
  constructor(
    private readonly answers: ConsoleAnswers,
    private readonly screen: TasksScreen,
  ) {}

  @Get()
  @ConsoleAccess('tasks', 'Read')
  list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<Screen> {
    return this.screen.list(request.principal!, query);
  }

  @Get('new')
  @ConsoleAccess('tasks', 'Write')
  form(): Screen {
    return registerTaskView();
  }

  @Post()
  @ConsoleAccess('tasks', 'Write')
  async register(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    await this.answers.form(request, response, await this.screen.register(request.form!));
  }

  @Get(':id')
  @ConsoleAccess('tasks', 'Read')
  view(@Req() request: ConsoleRequest, @Param('id') id: string): Promise<Screen> {
    return this.screen.task(request.principal!, id);
  }

  @Post(':id/cancel')
  @ConsoleAccess('tasks', 'Write')
  async cancel(@Req() request: ConsoleRequest, @Res() response: Response, @Param('id') id: string): Promise<void> {
    await this.answers.form(request, response, await this.screen.cancel(request.principal!, id));
  }

  @Post(':id/retry')
  @ConsoleAccess('tasks', 'Write')
  async retry(@Req() request: ConsoleRequest, @Res() response: Response, @Param('id') id: string): Promise<void> {
    await this.answers.form(request, response, await this.screen.retry(request.principal!, id));
  }
}
