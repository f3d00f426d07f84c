import { All, Get, NotFoundException, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../common/errors/api-error.js';
import { ASSETS } from './assets.js';
import { ConsoleController } from './console-controller.js';
import { ConsoleOpen } from './console-http.js';

@ConsoleController('assets')
@ConsoleOpen()
export class AssetsController {
  @Get(':name')
  asset(@Param('name') name: string, @Res() response: Response): void {
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!asset) throw new NotFoundException();
    response.type(asset.type).send(asset.body);
  }
}

/** Registered last: any other path under /console is a 404 page, not the API's JSON. */
@ConsoleController('')
@ConsoleOpen()
export class ConsoleNotFoundController {
  @All('*path')
  notFound(): never {
    throw new ApiError('NotFound', 'There is no such page in the console.');
  }
}
