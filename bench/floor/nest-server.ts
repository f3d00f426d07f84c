/**
 * The stack floor of rows 2f, 3af, 3bf, 3cf and 6f (the bench's default; see express-server.ts for `--floor express`)
 * on bare NestJS over Express, the service's own stack: the same routes and statements in one controller,
 * with Nest's own body parser and none of the service's global guard, interceptors, pipe, filter, log
 * lines or metrics. Whatever the service does per request, it does at least this, so its ratio is the
 * highest the row can reach on this stack in the same run.
 *
 * Usage: node nest-server.js --database-url <url> --pool-size <n> --service-dir <service build>; prints `LISTENING <port>`.
 */
import 'reflect-metadata';
import type { Server } from 'node:http';
import { Body, ConflictException, Controller, Get, HttpCode, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { add, announce, complete, pool, take, type ObjectBody, type TakenTask, type TaskBody } from './work.js';

@Controller()
class FloorController {
  @Get('health/live')
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Post('intel/collections/:collection/objects')
  @HttpCode(204)
  async objects(@Param('collection') collection: string, @Body() body: ObjectBody): Promise<void> {
    if (!(await add(Number(collection), body))) throw new ConflictException();
  }

  @Post('insight/task-queue/executing-tasks')
  @HttpCode(200)
  take(@Body() body: { limit: number }): Promise<TakenTask[]> {
    return take(body.limit);
  }

  @Post('insight/task-queue/completed-tasks')
  @HttpCode(204)
  async complete(@Body() body: TaskBody): Promise<void> {
    if (!(await complete(body))) throw new ConflictException();
  }
}

@Module({ controllers: [FloorController] })
class FloorModule {}

const app = await NestFactory.create<NestExpressApplication>(FloorModule, { logger: false });
// The service's two Express settings (src/configure-app.ts).
app.disable('x-powered-by');
app.set('etag', false);
await app.listen(0, '127.0.0.1');
announce((app.getHttpServer() as Server).address());
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
