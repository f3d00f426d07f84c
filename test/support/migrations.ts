import { expect } from '@jest/globals';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';

/**
 * Upgrades data written before a migration: rolls the database at `databaseUrl` back to before the migration
 * that added `column` to `table` (and every migration after it, whatever came later), checks the column is
 * gone, then applies every migration again over that data.
 */
export async function reapplyMigration(databaseUrl: string, { table, column }: { table: string; column: string }): Promise<void> {
  const dataSource = new DataSource(dataSourceOptions(databaseUrl, 2));
  await dataSource.initialize();
  try {
    const hasColumn = async () =>
      (await dataSource.query(`SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = $2`, [table, column])).length > 0;
    for (let undone = 0; (await hasColumn()) && undone < 20; undone++) await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await hasColumn()).toBe(false);
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
