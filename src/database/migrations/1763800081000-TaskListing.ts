import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `GET /insight/tasks` lists tasks newest first by (created_at, id): this index gives that order to every
 * page (a keyset walk backwards from the cursor). `created_at` never changes, so it does not cost the
 * frequent state updates their HOT path beyond what the queue's partial index on `state` already does.
 */
export class TaskListing1763800081000 implements MigrationInterface {
  name = 'TaskListing1763800081000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX insight_task_newest ON insight_task (created_at DESC, id DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX insight_task_newest`);
  }
}
