import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { BUILTIN_RESOURCES, type Principal } from '../common/guard/access.js';
import { SourceRunsService } from '../sources/source-runs.service.js';
import { SourcesService } from '../sources/sources.service.js';
import type { FormAnswer } from './console-answers.js';
import { cursorParam, nextCursor } from './paging.js';
import type { Screen } from './views/layout.js';
import { sourceHref, sourcesView, sourceView } from './views/sources.view.js';

const PAGE_SIZE = '50';

/** Sources through the sources area's services: the readable sources, one source's run log, "Run now". */
@Injectable()
export class SourcesScreen {
  constructor(
    private readonly sources: SourcesService,
    private readonly runs: SourceRunsService,
  ) {}

  async list(principal: Principal, query: Record<string, unknown>): Promise<Screen> {
    const cursor = cursorParam(query);
    const result = await this.sources.list(principal, { cursor, limit: PAGE_SIZE });
    return sourcesView({ sources: result.items, canRun: canRun(principal), paged: cursor !== undefined, next: nextCursor(result), now: Date.now() });
  }

  async source(principal: Principal, name: string, query: Record<string, unknown>, message?: string): Promise<Screen> {
    const cursor = cursorParam(query);
    const { body } = await this.sources.view(name);
    const runs = await this.sources.runs(name, { cursor, limit: PAGE_SIZE });
    return sourceView({
      source: body,
      runs: runs.items,
      canRun: canRun(principal),
      paged: cursor !== undefined,
      next: nextCursor(runs),
      message,
      now: Date.now(),
    });
  }

  /** A run now, as `POST /intel/sources/{name}/runs`; while one runs, the source's page says so (409). */
  async runNow(principal: Principal, name: string): Promise<FormAnswer> {
    try {
      const { runID } = await this.runs.start(name, principal.keyId);
      return { seeOther: sourceHref(name), created: { runID } };
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'RunInProgress') throw error;
      return { status: error.status, screen: await this.source(principal, name, {}, error.message) };
    }
  }
}

function canRun(principal: Principal): boolean {
  return principal.holds(BUILTIN_RESOURCES.intel, 'Write');
}
