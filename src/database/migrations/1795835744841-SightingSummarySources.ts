import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sighting_summary.sources`: per key the number of its `sighting_source` rows, added to by the statement
 * that inserts them (src/sightings/sightings.repository.ts), so that the summary of an object with one
 * sighted key, most objects, is one primary-key probe, with no aggregate over `sighting_source` (bench
 * row 21b). `sighting_source` stays: the distinct sources of an object's several keys are counted from it.
 * Backfilled from `sighting_source` in the migration's transaction.
 */
export class SightingSummarySources1795835744841 implements MigrationInterface {
  name = 'SightingSummarySources1795835744841';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sighting_summary ADD COLUMN sources integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`
      UPDATE sighting_summary s SET sources = n.sources
        FROM (SELECT key_type, key_value, count(*)::int AS sources FROM sighting_source GROUP BY key_type, key_value) n
       WHERE s.key_type = n.key_type AND s.key_value = n.key_value`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sighting_summary DROP COLUMN sources`);
  }
}
