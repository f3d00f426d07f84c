import { DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { createLogger, ROOT_LOGGER, type RootLogger } from './logger.js';

/** Provides the process's pino logger under ROOT_LOGGER: the one main.ts made, or one built from the config. */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig, logger: RootLogger = createLogger(config)): DynamicModule {
    return { module: LoggingModule, providers: [{ provide: ROOT_LOGGER, useValue: logger }], exports: [ROOT_LOGGER] };
  }
}
