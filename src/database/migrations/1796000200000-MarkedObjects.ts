import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The objects marked above TLP:CLEAR, per collection, by marking: an export states the most restrictive
 * marking among its objects (`X-TLP-Max`, extensions §19) before its body, and reads it from here, from the
 * most restrictive down, instead of scanning the collection (EXPORT_STATEMENTS.marking). Partial: unmarked
 * objects, what every write of an unmarked collection stores, add no entry and cost nothing to write.
 */
export class MarkedObjects1796000200000 implements MigrationInterface {
  name = 'MarkedObjects1796000200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "IDX_intel_object_marked" ON intel_object (collection_id, tlp) WHERE tlp > 0`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_intel_object_marked"`);
  }
}
