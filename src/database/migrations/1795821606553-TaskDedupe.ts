import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deduplicated registration (extensions §16): `content_hash` is the SHA-256 of what a task asks (schema,
 * normalised keys, file content), set on every task so a deduplicating registration finds identical tasks
 * however they were registered; `dedupe_key` is set only by deduplicating registrations, and its partial
 * unique index is what makes "exactly one task" hold under concurrent identical registrations on any number
 * of instances: the insert of the second waits for the first's commit and then does nothing (ON CONFLICT),
 * where a check-then-insert would let both in.
 */
export class TaskDedupe1795821606553 implements MigrationInterface {
  name = 'TaskDedupe1795821606553';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE insight_task ADD COLUMN content_hash bytea, ADD COLUMN dedupe_key bytea`);
    await queryRunner.query(`CREATE INDEX insight_task_content ON insight_task (content_hash) WHERE content_hash IS NOT NULL`);
    await queryRunner.query(`CREATE UNIQUE INDEX insight_task_inflight ON insight_task (dedupe_key) WHERE state = 'Pending' AND dedupe_key IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE insight_task DROP COLUMN content_hash, DROP COLUMN dedupe_key`);
  }
}
