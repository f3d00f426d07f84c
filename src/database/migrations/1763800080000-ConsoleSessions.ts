import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Web console sessions (src/console). The cookie carries `<id>.<secret>`; only a SHA-256 of the secret is
 * stored, so a copy of this table signs nobody in. `key_id` is the API key the session acts as: every
 * request checks that key again, so a revoked or expired key ends its sessions whatever this table says.
 * `last_seen_at` (idle timeout) is written at most once a minute per session; `expires_at` is the hard end.
 */
export class ConsoleSessions1763800080000 implements MigrationInterface {
  name = 'ConsoleSessions1763800080000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE console_session (
        id text PRIMARY KEY,
        secret_hash bytea NOT NULL,
        key_id integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX console_session_key_id ON console_session (key_id)`);
    await queryRunner.query(`CREATE INDEX console_session_expires_at ON console_session (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE console_session`);
  }
}
