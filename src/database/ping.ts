import type { DataSource } from 'typeorm';

/** One round trip to the database (the readiness probe): resolves when it answers, rejects when it does not. */
export async function pingDatabase(dataSource: DataSource): Promise<void> {
  await dataSource.query('SELECT 1');
}
