import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { join } from 'node:path';
import { AppModule } from './app.module.js';
import { ConfigError, loadConfigFromEnv } from './config/app-config.js';
import { configureApp } from './configure-app.js';
import type { EmbeddedDatabase } from './database/embedded-postgres.js';

async function main(): Promise<void> {
  const logger = new Logger('Main');
  let config;
  try {
    config = loadConfigFromEnv();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }

  let embedded: EmbeddedDatabase | undefined;
  if (config.databaseUrl === undefined) {
    const directory = join(config.dataDir, 'pg');
    logger.log(`DATABASE_URL is not set: starting the embedded PostgreSQL in ${directory}`);
    // Loaded only when used, so that an image running against an external database can omit the binaries.
    const { EmbeddedDatabase } = await import('./database/embedded-postgres.js');
    embedded = await EmbeddedDatabase.start(directory);
  }
  const databaseUrl = config.databaseUrl ?? embedded!.url;

  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot({ ...config, databaseUrl }), {
    bodyParser: false,
  });
  configureApp(app);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: shutting down`);
    await app.close();
    await embedded?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  await app.listen(config.port);
  logger.log(`Listening on http://localhost:${config.port} (OpenAPI: /openapi.json, UI: /docs)`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`Start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
