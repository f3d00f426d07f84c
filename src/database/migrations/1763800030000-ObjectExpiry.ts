import { MigrationInterface, QueryRunner } from 'typeorm';

/** Indicator lifecycle: object expiry, a per-collection time to live, and why an object was removed. */
export class ObjectExpiry1763800030000 implements MigrationInterface {
  name = 'ObjectExpiry1763800030000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // All three columns are nullable without a default: adding them rewrites no table.
    await queryRunner.query(`ALTER TABLE intel_collection ADD COLUMN object_ttl_seconds integer CHECK (object_ttl_seconds >= 1)`);
    // The moment the object stops existing (its own expiresAt, or the collection's TTL from its last write).
    await queryRunner.query(`ALTER TABLE intel_object ADD COLUMN expires_at timestamptz`);
    // The expiry job walks objects by expiry; most objects never expire and stay out of the index.
    await queryRunner.query(`CREATE INDEX "IDX_intel_object_expires_at" ON intel_object (expires_at) WHERE expires_at IS NOT NULL`);
    // Set on every Remove written from now on; older Remove records were all explicit deletes.
    await queryRunner.query(`ALTER TABLE intel_change ADD COLUMN reason text CHECK (reason IN ('Deleted', 'Expired'))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_change DROP COLUMN reason`);
    await queryRunner.query(`DROP INDEX "IDX_intel_object_expires_at"`);
    await queryRunner.query(`ALTER TABLE intel_object DROP COLUMN expires_at`);
    await queryRunner.query(`ALTER TABLE intel_collection DROP COLUMN object_ttl_seconds`);
  }
}
