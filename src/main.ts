import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { drainHttpServer } from './common/http/graceful-shutdown.js';
import { createLogger } from './common/logging/logger.js';
import { PinoNestLogger } from './common/logging/nest-logger.js';
import { loadConfigFromEnv } from './config/app-config.js';
import { configureApp } from './configure-app.js';
import { openServiceDatabase } from './startup/database-access.js';
import { failureReason } from './startup/failure-reason.js';
import { PortReservation } from './startup/port-reservation.js';

async function main(): Promise<void> {
  const logger = new Logger('Main');
  const config = loadConfigFromEnv();
  // From here on every line of the process, Nest's included, goes through the one pino logger.
  const rootLogger = createLogger(config);
  const nestLogger = new PinoNestLogger(rootLogger);
  Logger.overrideLogger(nestLogger);
  // Before anything is created or printed: a taken port stops start-up here.
  const port = await PortReservation.take(config.port);
  const database = await openServiceDatabase(config, (message) => logger.log(message));

  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot({ ...config, databaseUrl: database.url }, rootLogger), {
    bodyParser: false,
    logger: nestLogger,
  });
  configureApp(app);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    const grace = config.shutdownGraceSeconds;
    logger.log(`${signal}: shutting down; requests in flight have up to ${grace} s to finish`);
    const cut = await drainHttpServer(app.getHttpServer(), grace * 1000);
    if (cut > 0) logger.warn(`${cut} connection(s) still busy after ${grace} s were cut`);
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  await port.listen((free) => app.listen(free));
  logger.log(`Listening on http://localhost:${config.port} (OpenAPI: /openapi.json, UI: /docs)`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`Start-up failed: ${failureReason(error)}\n`);
  process.exit(1);
});
