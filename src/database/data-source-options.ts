import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations/index.js';

/** Connection settings shared by the service and the TypeORM CLI (ormconfig.ts). Never `synchronize`. */
export function dataSourceOptions(url: string, poolSize: number): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    extra: {
      // DATABASE_POOL_SIZE; a connection is taken per query or transaction, never while a request body is read.
      max: poolSize,
      // Bounds both opening a connection and waiting for a free one: while the database is down or saturated a
      // request fails (503) within seconds instead of hanging on the pool.
      connectionTimeoutMillis: 5_000,
    },
  };
}
