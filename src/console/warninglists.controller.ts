import { Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleAccess, type ConsoleRequest } from './console-http.js';
import type { Screen } from './views/layout.js';
import { WarninglistsScreen } from './warninglists.screen.js';

/** Warninglists: every list with its action and state, one list's entries; with `Write`, settings and the MISP import. */
@ConsoleController('warninglists')
export class WarninglistsController {
  constructor(
    private readonly answers: ConsoleAnswers,
    private readonly screen: WarninglistsScreen,
  ) {}

  @Get()
  @ConsoleAccess('intel', 'Read')
  list(@Req() request: ConsoleRequest): Promise<Screen> {
    return this.screen.list(request.principal!);
  }

  /** The MISP import, posted to the lists' own page (a refusal answered in place leaves an address that reloads). */
  @Post()
  @ConsoleAccess('intel', 'Write')
  async importMisp(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    await this.answers.form(request, response, await this.screen.importMisp(request.principal!, request as Request));
  }

  @Get(':name')
  @ConsoleAccess('intel', 'Read')
  warninglist(@Req() request: ConsoleRequest, @Param('name') name: string, @Query() query: Record<string, unknown>): Promise<Screen> {
    return this.screen.warninglist(request.principal!, name, query);
  }

  @Post(':name')
  @ConsoleAccess('intel', 'Write')
  async update(@Req() request: ConsoleRequest, @Res() response: Response, @Param('name') name: string): Promise<void> {
    await this.answers.form(request, response, await this.screen.update(name, request.form!));
  }
}
