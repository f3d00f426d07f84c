import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateFilebox1763800002500 implements MigrationInterface {
  name = 'CreateFilebox1763800002500';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Digests are raw bytes; the blob itself lives in storage under the file id.
    await queryRunner.query(`
      CREATE TABLE filebox_file (
        id uuid PRIMARY KEY,
        name text,
        size bigint NOT NULL CHECK (size > 0),
        md5 bytea NOT NULL,
        sha1 bytea NOT NULL,
        sha256 bytea NOT NULL,
        sha512 bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // A completed session keeps its file id so that a repeated completion answers the same file.
    await queryRunner.query(`
      CREATE TABLE filebox_upload_session (
        id uuid PRIMARY KEY,
        part_size integer NOT NULL CHECK (part_size > 0),
        file_id uuid REFERENCES filebox_file(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_activity_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_filebox_upload_session_activity" ON filebox_upload_session (last_activity_at)`);
    // storage_key: a server-generated blob key, new on every upload so that a replacement swaps atomically.
    await queryRunner.query(`
      CREATE TABLE filebox_upload_part (
        session_id uuid NOT NULL REFERENCES filebox_upload_session(id) ON DELETE CASCADE,
        number integer NOT NULL CHECK (number >= 1),
        size integer NOT NULL CHECK (size > 0),
        storage_key uuid NOT NULL,
        uploaded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, number)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE filebox_upload_part`);
    await queryRunner.query(`DROP TABLE filebox_upload_session`);
    await queryRunner.query(`DROP TABLE filebox_file`);
  }
}
