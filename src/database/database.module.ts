import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source-options.js';
import { InvalidationBus } from './invalidation-bus.js';
import { PoolMetrics } from './pool-metrics.js';

@Global()
@Module({})
export class DatabaseModule {
  /** Connects and runs the committed migrations before any module initialises. */
  static forRoot(databaseUrl: string, poolSize: number): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(databaseUrl, poolSize),
          migrationsRun: true,
          autoLoadEntities: true,
          retryAttempts: 3,
        }),
      ],
      providers: [InvalidationBus, PoolMetrics],
      exports: [InvalidationBus],
    };
  }
}
