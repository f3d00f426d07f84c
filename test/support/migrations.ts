import { expect } from '@jest/globals';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { createDatabase, createTestApp, type TestApp } from './test-app.js';

/** A column a migration adds: whether it is there tells whether the migration is applied. */
export interface MigrationMark {
  table: string;
  column: string;
}

/**
 * Upgrades data written before a migration: rolls the database at `databaseUrl` back to before the migration
 * that added `column` to `table` (and every migration after it, whatever came later), checks the column is
 * gone, then applies every migration again over that data.
 */
export async function reapplyMigration(databaseUrl: string, { table, column }: MigrationMark): Promise<void> {
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

/**
 * A fresh database on which the service as it is (`before`, closed afterwards) wrote what `write` writes, then
 * upgraded over that data by `reapplyMigration(mark)`; returns its URL, for `createTestApp({ DATABASE_URL })`.
 */
export async function upgradedDatabase(mark: MigrationMark, write: (before: TestApp) => Promise<void>): Promise<string> {
  const databaseUrl = await createDatabase();
  const before = await createTestApp({ DATABASE_URL: databaseUrl });
  try {
    await write(before);
  } finally {
    await before.close();
  }
  await reapplyMigration(databaseUrl, mark);
  return databaseUrl;
}
