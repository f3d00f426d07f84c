import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The status resources of TAXII writes (TAXII 2.1 §4.3): one row per POST of objects, readable by every
 * instance, kept at least 24 hours (then removed by the periodic job of src/taxii/taxii-writes.service.ts).
 * `collection` is the intel collection's name: who may read a status is decided by access to it.
 */
export class TaxiiStatus1763800061000 implements MigrationInterface {
  name = 'TaxiiStatus1763800061000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE taxii_status (
        id uuid PRIMARY KEY,
        collection text NOT NULL,
        status text NOT NULL,
        request_timestamp text NOT NULL,
        total_count integer NOT NULL,
        success_count integer NOT NULL,
        failure_count integer NOT NULL,
        pending_count integer NOT NULL,
        successes jsonb NOT NULL,
        failures jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_taxii_status_created_at" ON taxii_status (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE taxii_status`);
  }
}
