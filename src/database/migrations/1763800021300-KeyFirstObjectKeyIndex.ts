import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyFirstObjectKeyIndex1763800021300 implements MigrationInterface {
  name = 'KeyFirstObjectKeyIndex1763800021300';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The same uniqueness rule (a key belongs to at most one object per collection) with the key first:
    // a lookup across collections (POST /intel/lookup) then finds a key's entries in every collection with
    // one index probe instead of one per collection, and every other use of the index names all three
    // columns by equality. Same name, so unique violations are recognised as before.
    await queryRunner.query(`
      ALTER TABLE intel_object_key
        DROP CONSTRAINT intel_object_key_pkey,
        ADD CONSTRAINT intel_object_key_pkey PRIMARY KEY (key_type, value, collection_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE intel_object_key
        DROP CONSTRAINT intel_object_key_pkey,
        ADD CONSTRAINT intel_object_key_pkey PRIMARY KEY (collection_id, key_type, value)`);
  }
}
