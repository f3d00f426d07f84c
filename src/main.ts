import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { loadConfigFromEnv } from './config/app-config.js';
import { configureApp } from './configure-app.js';
import { openServiceDatabase } from './startup/database-access.js';
import { failureReason } from './startup/failure-reason.js';
import { PortReservation } from './startup/port-reservation.js';

async function main(): Promise<void> {
  const logger = new Logger('Main');
  const config = loadConfigFromEnv();
  // Before anything is created or printed: a taken port stops start-up here.
  const port = await PortReservation.take(config.port);
  const database = await openServiceDatabase(config, (message) => logger.log(message));

  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot({ ...config, databaseUrl: database.url }), {
    bodyParser: false,
  });
  configureApp(app);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: shutting down`);
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
