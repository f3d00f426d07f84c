import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddObjectKeyNetwork1763800013000 implements MigrationInterface {
  name = 'AddObjectKeyNetwork1763800013000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The IPAddress and IPNetwork keys as inet, for network search (within / contains). Generated from the
    // normalised text, so every writer fills it without knowing about it; NULL for every other key type.
    await queryRunner.query(`
      ALTER TABLE intel_object_key
        ADD COLUMN network inet GENERATED ALWAYS AS (
          CASE WHEN key_type IN ('IPAddress', 'IPNetwork') THEN value::inet END
        ) STORED`);
    // btree_gist (a trusted extension: the database owner may create it) lets one GiST index hold the
    // collection beside the network, so a search in one collection reads only that collection's entries.
    // Partial: only the network keys are indexed, so adding hashes, domains and URLs costs nothing more.
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS btree_gist`);
    await queryRunner.query(`
      CREATE INDEX "IDX_intel_object_key_network" ON intel_object_key
        USING gist (collection_id, network inet_ops) WHERE network IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_intel_object_key_network"`);
    await queryRunner.query(`ALTER TABLE intel_object_key DROP COLUMN network`);
  }
}
