import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { loadConfigFromEnv } from '../config/app-config.js';
import { dataSourceOptions } from './data-source-options.js';

const config = loadConfigFromEnv();
if (config.databaseUrl === undefined) {
  throw new Error('DATABASE_URL must be set for the TypeORM CLI');
}

/**
 * The data source of the TypeORM CLI (migration:run, migration:revert, migration:generate), loaded from the
 * build output. The service itself connects through TypeOrmModule with the same options.
 */
export default new DataSource({
  ...dataSourceOptions(config.databaseUrl, config.databasePoolSize),
  entities: [fileURLToPath(new URL('../', import.meta.url)) + '**/entities/*.entity.js'],
});
