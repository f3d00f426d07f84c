import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who and how for every change record (extensions §14): the key whose request made it, the request's id
 * (or a job run's), the way it came (`via`) and a source's name. Written by the statement that writes the
 * record (change-records.ts, insertChanges). Nullable, without defaults: adding them rewrites nothing, and
 * records written before them have no attribution (null), which is what is known of them.
 */
export class ChangeAttribution1795819637156 implements MigrationInterface {
  name = 'ChangeAttribution1795819637156';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_change ADD COLUMN via text, ADD COLUMN key_id integer, ADD COLUMN request_id text, ADD COLUMN source text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_change DROP COLUMN via, DROP COLUMN key_id, DROP COLUMN request_id, DROP COLUMN source`);
  }
}
