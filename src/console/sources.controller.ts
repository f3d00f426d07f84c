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

/** Sources: the readable ones with state, runs and claims; one source's run log; "Run now". */
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
