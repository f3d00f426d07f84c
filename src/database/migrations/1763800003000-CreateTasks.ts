import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateTasks1763800003000 implements MigrationInterface {
  name = 'CreateTasks1763800003000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE insight_task (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        schema_id text NOT NULL,
        object_keys json,
        file_id uuid,
        state text NOT NULL DEFAULT 'Pending' CHECK (state IN ('Pending', 'Completed', 'Failed')),
        created_at timestamptz NOT NULL DEFAULT now(),
        deliveries integer NOT NULL DEFAULT 0,
        lease_expires_at timestamptz,
        result json,
        error_code text,
        error_message text,
        CHECK (object_keys IS NOT NULL OR file_id IS NOT NULL),
        -- A task is leased exactly when it has been taken; the report and expiry rules rely on it.
        CHECK ((deliveries = 0) = (lease_expires_at IS NULL)),
        CHECK ((state = 'Completed') = (result IS NOT NULL)),
        CHECK ((state = 'Failed') = (error_code IS NOT NULL))
      )`);
    // The queue: only pending tasks, in take order. Completed and failed tasks (millions over time) are not
    // in it, so taking stays an index range scan over what is actually waiting.
    await queryRunner.query(`CREATE INDEX "IDX_insight_task_queue" ON insight_task (created_at, id) WHERE state = 'Pending'`);
    // Running and expired leases, for failing tasks past the delivery limit without scanning the queue.
    await queryRunner.query(
      `CREATE INDEX "IDX_insight_task_leases" ON insight_task (lease_expires_at)
        WHERE state = 'Pending' AND lease_expires_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE insight_task`);
  }
}
