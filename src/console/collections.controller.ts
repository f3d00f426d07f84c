import { Get, Param, Query, Req } from '@nestjs/common';
import { ClientGone } from '../common/http/long-poll.js';
import { CollectionsScreen } from './collections.screen.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleAccess, wantsFragment, type ConsoleRequest } from './console-http.js';
import type { Html } from './html.js';
import type { Screen } from './views/layout.js';

const COLLECTION = { parent: 'intel', param: 'name' } as const;

/** Collections the key may read, a collection's objects (cursor pages), its live change feed, one object. */
@ConsoleController('collections')
export class CollectionsController {
  constructor(private readonly screen: CollectionsScreen) {}

  @Get()
  list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<Screen> {
    return this.screen.list(request.principal!, query);
  }

  @Get(':name')
  @ConsoleAccess(COLLECTION, 'Read')
  objects(@Req() request: ConsoleRequest, @Param('name') name: string, @Query() query: Record<string, unknown>): Promise<Screen> {
    return this.screen.collection(request.principal!, name, query);
  }

  /** From htmx (the live tail) a long-poll answered with a fragment; otherwise a page, at once. */
  @Get(':name/changes')
  @ConsoleAccess(COLLECTION, 'Read')
  changes(
    @Req() request: ConsoleRequest,
    @Param('name') name: string,
    @Query() query: Record<string, unknown>,
    @ClientGone() gone: AbortSignal,
  ): Promise<Screen | Html> {
    return this.screen.changesAfter(request.principal!, name, query, wantsFragment(request), gone);
  }

  @Get(':name/object')
  @ConsoleAccess(COLLECTION, 'Read')
  object(@Req() request: ConsoleRequest, @Param('name') name: string, @Query() query: Record<string, unknown>): Promise<Screen> {
    return this.screen.object(request.principal!, name, query);
  }
}
