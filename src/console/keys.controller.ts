import { Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleAccess, type ConsoleRequest } from './console-http.js';
import { KeysScreen } from './keys.screen.js';
import type { Screen } from './views/layout.js';

/** API keys for admins: list, generate (value shown once), set a key's TLP ceiling or reliability, revoke; the same checks as `/auth/keys`. */
@ConsoleController('keys')
export class KeysController {
  constructor(
    private readonly answers: ConsoleAnswers,
    private readonly screen: KeysScreen,
  ) {}

  @Get()
  @ConsoleAccess('auth', 'Read')
  list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<Screen> {
    return this.screen.list(request.principal!, query);
  }

  @Get('new')
  @ConsoleAccess('auth', 'Write')
  newKey(@Req() request: ConsoleRequest): Promise<Screen> {
    return this.screen.editor(request.principal!);
  }

  @Post()
  @ConsoleAccess('auth', 'Write')
  async create(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    await this.answers.form(request, response, await this.screen.create(request.principal!, request.form!));
  }

  @Post(':id')
  @ConsoleAccess('auth', 'Write')
  async update(@Req() request: ConsoleRequest, @Res() response: Response, @Param('id') id: string): Promise<void> {
    await this.answers.form(request, response, await this.screen.update(request.principal!, id, request.form!));
  }

  @Post(':id/revoke')
  @ConsoleAccess('auth', 'Write')
  async revoke(@Req() request: ConsoleRequest, @Res() response: Response, @Param('id') id: string): Promise<void> {
    await this.answers.form(request, response, await this.screen.revoke(id));
  }
}
