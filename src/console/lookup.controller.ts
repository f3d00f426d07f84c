import { Get, HttpCode, Post, Req } from '@nestjs/common';
import { ConsoleController } from './console-controller.js';
import type { ConsoleRequest } from './console-http.js';
import { LookupScreen } from './lookup.screen.js';
import type { Screen } from './views/layout.js';
import { lookupView } from './views/lookup.view.js';

/** Paste-a-list lookup in every collection the key may read. */
@ConsoleController('lookup')
export class LookupController {
  constructor(private readonly screen: LookupScreen) {}

  @Get()
  form(): Screen {
    return lookupView({ text: '' });
  }

  @Post()
  @HttpCode(200)
  lookup(@Req() request: ConsoleRequest): Promise<Screen> {
    return this.screen.lookup(request.principal!, request.form?.get('indicators') ?? '');
  }
}
