import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { AllExceptionsFilter } from './app/all-exceptions.filter.js';
import { ApiKeyGuard } from './app/api-key.guard.js';
import { RateLimitInterceptor } from './app/rate-limit.interceptor.js';
import { AuditInterceptor } from './audit/audit.interceptor.js';
import { AuditModule } from './audit/audit.module.js';
import { AuthModule } from './auth/auth.module.js';
import { EventsModule } from './common/events/domain-events.js';
import { ResultInterceptor } from './common/http/result.interceptor.js';
import type { RootLogger } from './common/logging/logger.js';
import { LoggingModule } from './common/logging/logging.module.js';
import { MetricsModule } from './common/metrics/metrics.module.js';
import { AppValidationPipe } from './common/validation/validation.pipe.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { ConsoleModule } from './console/console.module.js';
import { DatabaseModule } from './database/database.module.js';
import { ExtensionApiModule } from './extensions/extension-api.module.js';
import { loadExtension } from './extensions/extension-loader.js';
import { FileboxModule } from './filebox/filebox.module.js';
import { HealthModule } from './health/health.module.js';
import { InsightModule } from './insight/insight.module.js';
import { IntelReadsModule } from './intel/intel-reads.module.js';
import { IntelModule } from './intel/intel.module.js';
import { ScoringModule } from './scoring/scoring.module.js';
import { SightingsModule } from './sightings/sightings.module.js';
import { SourcesModule } from './sources/sources.module.js';
import { TaxiiModule } from './taxii/taxii.module.js';

/** A config whose database is settled (given, or the embedded one started by main.ts or the tests). */
export type ResolvedConfig = AppConfig & { databaseUrl: string };

@Module({})
export class AppModule {
  /** `logger`: the process's logger when main.ts made one already (it logs before the application exists). */
  static forRoot(config: ResolvedConfig, logger?: RootLogger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(config, logger),
        MetricsModule,
        DatabaseModule.forRoot(config.databaseUrl, config.databasePoolSize),
        EventsModule,
        HealthModule,
        AuthModule,
        AuditModule,
        FileboxModule,
        IntelModule,
        IntelReadsModule,
        ScoringModule,
        SightingsModule,
        InsightModule,
        TaxiiModule,
        SourcesModule,
        ...(config.console.enabled ? [ConsoleModule] : []),
        ExtensionApiModule.forRoot(config.extensionSettings),
        // Loaded last: an extension builds on everything above.
        ...config.extensions.map(loadExtension),
      ],
      // Registered through APP_* tokens so that tests built from AppModule get exactly the production stack.
      providers: [
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        // First, so outermost: it sees the final answer of the others and holds it until its entry is stored.
        { provide: APP_INTERCEPTOR, useClass: AuditInterceptor },
        { provide: APP_INTERCEPTOR, useClass: RateLimitInterceptor },
        { provide: APP_INTERCEPTOR, useClass: ResultInterceptor },
        { provide: APP_PIPE, useClass: AppValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }
}
