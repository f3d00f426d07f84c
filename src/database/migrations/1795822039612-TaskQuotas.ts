import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Quotas per result schema (extensions §16): limits per UTC minute, hour and day and on leased tasks, and
 * what each window has handed out. The take statement locks a schema's row while it hands out its tasks,
 * so the counts hold across instances; `handouts` grows with every hand-out, and a take whose snapshot
 * saw an older value than the row it locked knows it may miss leases (src/insight/task-statements.ts).
 */
export class TaskQuotas1795822039612 implements MigrationInterface {
  name = 'TaskQuotas1795822039612';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE insight_quota (
        schema_id text PRIMARY KEY,
        per_minute integer CHECK (per_minute > 0),
        per_hour integer CHECK (per_hour > 0),
        per_day integer CHECK (per_day > 0),
        max_leased integer CHECK (max_leased > 0),
        minute_start timestamptz,
        minute_used integer NOT NULL DEFAULT 0,
        hour_start timestamptz,
        hour_used integer NOT NULL DEFAULT 0,
        day_start timestamptz,
        day_used integer NOT NULL DEFAULT 0,
        handouts bigint NOT NULL DEFAULT 0,
        CHECK (num_nonnulls(per_minute, per_hour, per_day, max_leased) > 0)
      )`);
    // Live leases of one schema, for maxLeased (the take counts them per quota'd schema).
    await queryRunner.query(
      `CREATE INDEX insight_task_schema_leases ON insight_task (schema_id, lease_expires_at) WHERE state = 'Pending' AND lease_expires_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX insight_task_schema_leases`);
    await queryRunner.query(`DROP TABLE insight_quota`);
  }
}
