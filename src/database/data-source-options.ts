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
    // 16 concurrent clients are the common load; leave headroom for jobs and health checks.
    extra: { max: 24 },
  };
}
