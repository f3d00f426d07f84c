import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A key's view gets a tag (`ETag: "<version>"`), as collections, sources and schemas have, so that
 * `PATCH /auth/keys/{id}` can honour `If-Match` (extensions §18, §19). Every change of the row moves it: its
 * ceiling, its revocation, its use (`lastUsedAt`, `lastUsedAddress` are in the view).
 */
export class KeyVersions1796000100000 implements MigrationInterface {
  name = 'KeyVersions1796000100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE auth_api_key ADD COLUMN version integer NOT NULL DEFAULT 1 CHECK (version >= 1)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE auth_api_key DROP COLUMN version`);
  }
}
