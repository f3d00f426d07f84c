import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail (src/audit) and key hygiene (src/auth):
 * - `audit_entry`: one row per audited request. `at` is the moment the outcome was known (taken by the
 *   instance, not at insert: entries are inserted in groups). No foreign key to the key: an entry outlives
 *   anything it names, and its insert takes no lock on `auth_api_key`. `target` is compared in byte order
 *   (COLLATE "C") so that a prefix filter (`intel/c1` and everything under it) is an index range.
 * - `auth_api_key.prefix`: the first 8 characters of the value, kept in clear to tell keys apart; NULL for
 *   keys made before (their value was never stored). `last_used_address`: written with `last_used_at`.
 *   `allowed_networks`: CIDRs the key may be used from; NULL means anywhere.
 */
export class AuditTrail1763800070000 implements MigrationInterface {
  name = 'AuditTrail1763800070000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE audit_entry (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL,
        key_id integer,
        request_id text NOT NULL,
        method text NOT NULL,
        route text NOT NULL,
        target text COLLATE "C",
        status smallint NOT NULL,
        address text
      )`);
    // Newest first for the listing and for retention; by key and by target for the two selective filters.
    await queryRunner.query(`CREATE INDEX "IDX_audit_entry_at" ON audit_entry (at, id)`);
    await queryRunner.query(`CREATE INDEX "IDX_audit_entry_key" ON audit_entry (key_id, at, id)`);
    await queryRunner.query(`CREATE INDEX "IDX_audit_entry_target" ON audit_entry (target, at, id)`);
    // Nullable without defaults: adding them rewrites no table.
    await queryRunner.query(`ALTER TABLE auth_api_key ADD COLUMN prefix text, ADD COLUMN last_used_address text, ADD COLUMN allowed_networks text[]`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE auth_api_key DROP COLUMN prefix, DROP COLUMN last_used_address, DROP COLUMN allowed_networks`);
    await queryRunner.query(`DROP TABLE audit_entry`);
  }
}
