import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The executors' protocol (extensions §16): attempts with lease tokens, heartbeats, failure kinds,
 * priorities and per-task attempt limits. The current attempt lives in columns of the task row, so taking,
 * completing and heartbeating stay one row update each; an attempt that ends without finishing the task
 * (lease expired and taken over, transient or rate-limited failure) moves into `attempt_log`, which only the
 * task view and the refusal of a stale report read.
 */
export class TaskAttempts1795819717617 implements MigrationInterface {
  name = 'TaskAttempts1795819717617';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE insight_task
        ADD COLUMN priority smallint NOT NULL DEFAULT 3 CHECK (priority BETWEEN 1 AND 5),
        ADD COLUMN max_attempts smallint CHECK (max_attempts BETWEEN 1 AND 20),
        -- Not takeable before (back-off of a transient or rate-limited failure); null: at once.
        ADD COLUMN available_at timestamptz,
        ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false,
        -- The current attempt: SHA-256 of its lease token (the token itself is never stored), who took it.
        ADD COLUMN lease_token_hash bytea,
        ADD COLUMN attempt_key_id integer,
        ADD COLUMN attempt_executor text,
        ADD COLUMN attempt_taken_at timestamptz,
        ADD COLUMN attempt_ended_at timestamptz,
        ADD COLUMN attempt_outcome text,
        ADD COLUMN attempt_error jsonb,
        -- SHA-256 of the accepted report of the current attempt: a replay of it answers as the first did.
        ADD COLUMN report_digest bytea,
        ADD COLUMN progress jsonb,
        ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]'`);
    // A task back in the queue after a transient failure has used attempts but holds no lease: the old rule
    // "taken at least once exactly when leased" no longer holds. Reports now require a lease (the statements
    // of src/insight/task-statements.ts test lease_expires_at, not deliveries).
    await queryRunner.query(`
      DO $$
      DECLARE name text;
      BEGIN
        SELECT conname INTO name FROM pg_constraint
         WHERE conrelid = 'insight_task'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%deliveries = 0%';
        EXECUTE format('ALTER TABLE insight_task DROP CONSTRAINT %I', name);
      END $$`);
    await queryRunner.query(`ALTER TABLE insight_task ADD CONSTRAINT insight_task_lease_taken CHECK (lease_expires_at IS NULL OR deliveries > 0)`);
    // Take order is now priority first: the queue index follows it (same partial predicate, same size).
    await queryRunner.query(`DROP INDEX "IDX_insight_task_queue"`);
    await queryRunner.query(`CREATE INDEX "IDX_insight_task_queue" ON insight_task (priority, created_at, id) WHERE state = 'Pending'`);
    // A rate-limited failure holds back its whole schema until `until` (the provider's limit is per account).
    await queryRunner.query(`
      CREATE TABLE insight_schema_pause (
        schema_id text PRIMARY KEY,
        until timestamptz NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE insight_schema_pause`);
    await queryRunner.query(`ALTER TABLE insight_task DROP CONSTRAINT insight_task_lease_taken`);
    await queryRunner.query(`ALTER TABLE insight_task ADD CHECK ((deliveries = 0) = (lease_expires_at IS NULL))`);
    await queryRunner.query(`DROP INDEX "IDX_insight_task_queue"`);
    await queryRunner.query(`CREATE INDEX "IDX_insight_task_queue" ON insight_task (created_at, id) WHERE state = 'Pending'`);
    await queryRunner.query(`
      ALTER TABLE insight_task
        DROP COLUMN priority, DROP COLUMN max_attempts, DROP COLUMN available_at, DROP COLUMN cancel_requested,
        DROP COLUMN lease_token_hash, DROP COLUMN attempt_key_id, DROP COLUMN attempt_executor, DROP COLUMN attempt_taken_at,
        DROP COLUMN attempt_ended_at, DROP COLUMN attempt_outcome, DROP COLUMN attempt_error, DROP COLUMN report_digest,
        DROP COLUMN progress, DROP COLUMN attempt_log`);
  }
}
