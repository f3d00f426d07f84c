import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Request counters hand out units in blocks (src/auth/request-allowance-leases.ts):
 * - `lease_until`: until when an instance may still spend units granted to it ahead of use. An instance
 *   refused by the counter counts again until then before it answers 429, because another instance may
 *   give back what it did not spend. NULL: no unit was ever granted ahead of use on that counter.
 * - `granted`: how many units the last grant added, so that the granting statement numbers its units
 *   from its own RETURNING (PostgreSQL before 18 has no `RETURNING old.*`). 0 on existing rows.
 */
export class RequestCountLease1763800050000 implements MigrationInterface {
  name = 'RequestCountLease1763800050000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE auth_request_count ADD COLUMN lease_until timestamptz, ADD COLUMN granted integer NOT NULL DEFAULT 0`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE auth_request_count DROP COLUMN lease_until, DROP COLUMN granted`);
  }
}
