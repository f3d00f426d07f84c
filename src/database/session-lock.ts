import type { DataSource, EntityManager } from 'typeorm';

/**
 * Runs `work` while this process holds the session advisory lock `key` (a key from advisory-locks.ts) on a
 * connection of its own, taken without waiting: undefined, and no work, when another session holds it.
 * `work` gets that connection's manager (its statements run there, outside any transaction). For the
 * periodic jobs one instance at a time runs (the file store's sweep; the sighting roll-up has the same shape).
 */
export async function whileHoldingSessionLock<T>(dataSource: DataSource, key: number, work: (manager: EntityManager) => Promise<T>): Promise<T | undefined> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const [{ locked }]: { locked: boolean }[] = await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [key]);
    if (!locked) return undefined;
    try {
      return await work(runner.manager);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [key]);
    }
  } finally {
    await runner.release();
  }
}
