import type { Pool } from 'pg';
import { EntityManager, type DataSource } from 'typeorm';

/**
 * A statement that PostgreSQL parses and plans once per pooled connection (a named prepared statement).
 *
 * TypeORM's `query()` sends every statement unnamed, so PostgreSQL parses and plans it on each call. For
 * the few statements that run on (nearly) every request, planning costs more than executing: the API-key
 * lookup plans in ~0.15 ms and executes in ~0.08 ms, and a sequential round trip drops from ~0.5 ms to
 * ~0.17 ms when prepared (measured by `npm run bench`, see BENCHMARKS.md). Use it for such hot reads and
 * single-statement writes outside transactions; everything else keeps using TypeORM.
 */
export class PreparedStatement<Row> {
  /** `name` must be unique per `text` in the whole service (pg keys prepared statements by name per connection). */
  constructor(
    readonly name: string,
    readonly text: string,
  ) {}

  /** From a statement kept as plain text with its name (e.g. src/intel/object-statements.ts). */
  static of<Row>(statement: { name: string; text: string }): PreparedStatement<Row> {
    return new PreparedStatement<Row>(statement.name, statement.text);
  }

  /**
   * Runs on the data source's own connection pool, outside any transaction. Errors are pg's own
   * (not wrapped in TypeORM's QueryFailedError).
   */
  async run(dataSource: DataSource, values: unknown[]): Promise<Row[]> {
    const pool = (dataSource.driver as unknown as { master?: Pool }).master;
    if (!pool) return dataSource.query(this.text, values);
    const result = await pool.query({ name: this.name, text: this.text, values });
    return result.rows as Row[];
  }

  /** On the pool as `run` does, or inside the manager's transaction (unnamed there: a transaction holds one connection briefly). */
  on(runner: DataSource | EntityManager, values: unknown[]): Promise<Row[]> {
    return runner instanceof EntityManager ? runner.query(this.text, values) : this.run(runner, values);
  }
}
