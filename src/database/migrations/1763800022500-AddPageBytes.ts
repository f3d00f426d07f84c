import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddPageBytes1763800022500 implements MigrationInterface {
  name = 'AddPageBytes1763800022500';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The size of a row as JSON text, for pages bounded in bytes (sizeBoundedPage): adding up the sizes of
    // the rows a page reads must not read their large values. Generated, so every writer fills it without
    // knowing about it; adding the columns computes them once for the rows already stored.
    await queryRunner.query(`
      ALTER TABLE intel_object
        ADD COLUMN row_bytes integer GENERATED ALWAYS AS (octet_length(keys::text) + octet_length(context::text)) STORED`);
    await queryRunner.query(`
      ALTER TABLE intel_change
        ADD COLUMN row_bytes integer GENERATED ALWAYS AS (octet_length(object::text)) STORED`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_change DROP COLUMN row_bytes`);
    await queryRunner.query(`ALTER TABLE intel_object DROP COLUMN row_bytes`);
  }
}
