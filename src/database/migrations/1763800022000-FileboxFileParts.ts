import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * extensions §6: a file assembled from an upload session keeps its part blobs (completion copies nothing),
 * so its row lists them in order; every part but the last holds `part_size` bytes, which maps any byte
 * position to its blob. NULL: the file is the single blob keyed by its id (direct uploads, older files).
 */
export class FileboxFileParts1763800022000 implements MigrationInterface {
  name = 'FileboxFileParts1763800022000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE filebox_file
        ADD COLUMN part_size integer CHECK (part_size > 0),
        ADD COLUMN part_keys uuid[],
        ADD CONSTRAINT filebox_file_parts_together CHECK ((part_size IS NULL) = (part_keys IS NULL))`);
    // The orphan sweep asks, for each blob in storage, whether any row still refers to it.
    await queryRunner.query(`CREATE INDEX "IDX_filebox_file_part_keys" ON filebox_file USING gin (part_keys)`);
    await queryRunner.query(`CREATE INDEX "IDX_filebox_upload_part_storage_key" ON filebox_upload_part (storage_key)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_filebox_upload_part_storage_key"`);
    await queryRunner.query(`DROP INDEX "IDX_filebox_file_part_keys"`);
    await queryRunner.query(`ALTER TABLE filebox_file DROP CONSTRAINT filebox_file_parts_together, DROP COLUMN part_keys, DROP COLUMN part_size`);
  }
}
