import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations/index.js';

/** Connection settings shared by the service and the TypeORM CLI (ormconfig.ts). Never `synchronize`. */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    extra: {
      // 16 concurrent clients are the common load; leave headroom for jobs and health checks.
      max: 24,
      // Bounds both opening a connection and waiting for a free one: while the database is down or saturated a
      // request fails (503) within seconds instead of hanging on the pool.
      connectionTimeoutMillis: 5_000,
    },
  };
}
