import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Request counters remember until when an instance may still spend units granted to it ahead of use
 * (src/auth/request-allowance-leases.ts). An instance refused by the counter waits until then before it
 * answers 429, because another instance may give back what it did not spend. NULL: no lease was ever
 * granted on that counter (rows written before this migration, or only ever counted one request at a time).
 */
export class RequestCountLease1763800050000 implements MigrationInterface {
  name = 'RequestCountLease1763800050000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE auth_request_count ADD COLUMN lease_until timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE auth_request_count DROP COLUMN lease_until`);
  }
}
