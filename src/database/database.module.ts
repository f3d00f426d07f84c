import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { dataSourceOptions } from './data-source-options.js';
import { InvalidationBus } from './invalidation-bus.js';
import { PoolMetrics } from './pool-metrics.js';
import { runMigrationsExclusively } from './run-migrations.js';

@Global()
@Module({})
export class DatabaseModule {
  /** Connects and runs the committed migrations before any module initialises. */
  static forRoot(databaseUrl: string, poolSize: number): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...dataSourceOptions(databaseUrl, poolSize), autoLoadEntities: true, retryAttempts: 3 }),
          // Migrations under a lock (see runMigrationsExclusively), not TypeORM's migrationsRun, which has none.
          dataSourceFactory: async (options?: DataSourceOptions) => {
            const dataSource = await new DataSource(options!).initialize();
            // A failed run is retried (retryAttempts) on a new data source: let this one's pool go.
            await runMigrationsExclusively(dataSource).catch(async (error: unknown) => {
              await dataSource.destroy();
              throw error;
            });
            return dataSource;
          },
        }),
      ],
      providers: [InvalidationBus, PoolMetrics],
      exports: [InvalidationBus],
    };
  }
}
