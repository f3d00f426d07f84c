import type { DataSource } from 'typeorm';
import { MIGRATIONS_LOCK } from './advisory-locks.js';

/**
 * Applies the pending migrations, one migrator at a time across every process on the database. TypeORM
 * takes no lock of its own: instances starting together (or an admin `migrate` beside a start) each saw
 * the same migrations pending and ran them at once, and all but one failed ("relation already exists").
 * A session advisory lock on a connection of its own serialises them; whoever comes second finds nothing
 * pending. Returns the names of the migrations this call applied.
 */
export async function runMigrationsExclusively(dataSource: DataSource): Promise<string[]> {
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATIONS_LOCK]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((migration) => migration.name);
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATIONS_LOCK]);
    }
  } finally {
    await lock.release();
  }
}

/** Every migration of this version, applied or pending, and those a newer version applied (`unknown`). */
export async function migrationStates(dataSource: DataSource): Promise<{ name: string; state: string }[]> {
  const runner = dataSource.createQueryRunner();
  let applied: Set<string>;
  try {
    const table = dataSource.options.migrationsTableName ?? 'migrations';
    applied = (await runner.hasTable(table))
      ? new Set(((await runner.query(`SELECT name FROM ${table}`)) as { name: string }[]).map((row) => row.name))
      : new Set();
  } finally {
    await runner.release();
  }
  const known = dataSource.migrations.map((migration) => migration.name!);
  return [
    ...known.map((name) => ({ name, state: applied.has(name) ? 'applied' : 'pending' })),
    // Applied by a newer version of the service than this one.
    ...[...applied].filter((name) => !known.includes(name)).map((name) => ({ name, state: 'unknown' })),
  ];
}
