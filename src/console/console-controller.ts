import { applyDecorators, Controller, UseFilters, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../common/guard/access.decorators.js';
import { ConsoleErrorFilter, ConsoleGuard, ConsoleHtmlInterceptor } from './console.guard.js';

/**
 * A console controller: outside the API's key guard (`@Public`, not in the OpenAPI document), behind the
 * console's session guard, with HTML answers and HTML errors.
 */
export const ConsoleController = (path: string) =>
  applyDecorators(
    Controller(path === '' ? 'console' : `console/${path}`),
    Public(),
    ApiExcludeController(),
    UseGuards(ConsoleGuard),
    UseFilters(ConsoleErrorFilter),
    UseInterceptors(ConsoleHtmlInterceptor),
  );
