import { Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { SourcesService } from '../sources/sources.service.js';
import { ConsoleAnswers } from './console-answers.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleAccess, type ConsoleRequest } from './console-http.js';
import { SourcesScreen } from './sources.screen.js';
import type { Screen } from './views/layout.js';

/** A source is read with `Read` on its collection, as `GET /intel/sources/{name}` (the resolver names it). */
const SOURCE_COLLECTION = { parent: 'intel', param: 'name', resolver: SourcesService } as const;

/** Sources: the readable ones with state, runs and claims; one source's run log; "Run now"; add and edit (with "Test"). */
@ConsoleController('sources')
export class SourcesController {
  constructor(
    private readonly answers: ConsoleAnswers,
    private readonly screen: SourcesScreen,
  ) {}

  @Get()
  list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<Screen> {
    return this.screen.list(request.principal!, query);
  }

  /** The source form of the sources page, as `POST /intel/sources` (or its "Test", a dry run). */
  @Post()
  @ConsoleAccess('intel', 'Write')
  async create(@Req() request: ConsoleRequest, @Res() response: Response): Promise<void> {
    await this.answers.form(request, response, await this.screen.submit(request.form!));
  }

  @Get(':name/edit')
  @ConsoleAccess('intel', 'Write')
  editor(@Param('name') name: string): Promise<Screen> {
    return this.screen.editor(name);
  }

  /** The edited source form, as `PATCH /intel/sources/{name}` (or its "Test", a dry run). */
  @Post(':name/edit')
  @ConsoleAccess('intel', 'Write')
  async update(@Req() request: ConsoleRequest, @Res() response: Response, @Param('name') name: string): Promise<void> {
    await this.answers.form(request, response, await this.screen.submit(request.form!, name));
  }

  @Get(':name')
  @ConsoleAccess(SOURCE_COLLECTION, 'Read')
  source(@Req() request: ConsoleRequest, @Param('name') name: string, @Query() query: Record<string, unknown>): Promise<Screen> {
    return this.screen.source(request.principal!, name, query);
  }

  /** "Run now", as `POST /intel/sources/{name}/runs`. */
  @Post(':name')
  @ConsoleAccess('intel', 'Write')
  async runNow(@Req() request: ConsoleRequest, @Res() response: Response, @Param('name') name: string): Promise<void> {
    await this.answers.form(request, response, await this.screen.runNow(request.principal!, name));
  }
}
