import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * TLP markings (extensions §19), stored as ranks (0 CLEAR … 4 RED, src/markings/tlp.ts).
 *
 * - An object's marking is the most restrictive among its live claims: `api_tlp` (the api claim's, set by
 *   every native write; NULL while no native write claims the object) and `claimed_tlp` (the most restrictive
 *   of its sources' claims, set by source runs; NULL without one). `tlp` is generated from the two, so no
 *   writer can store an object whose marking disagrees with its claims, and readers compare one column.
 * - `was_tlp`: the marking before the object's last update. RETURNING sees only the new row; each UPDATE sets
 *   it from the row it locked (SET reads the latest committed version after any wait), so the change record
 *   it writes says whether the object crossed a key's ceiling (extensions §19 "Feed per key").
 * - Change records keep the marking after (`tlp`) and before (`was_tlp`; NULL for an Add) the change.
 * - Claims keep the marking their last listing carried; keys their ceiling (`max_tlp`, default RED: every key
 *   made before reads what it read); collections the marking of native writes that name none.
 * Everything stored before is TLP:CLEAR (adding the generated column rewrites intel_object once).
 */
export class Markings1796000000000 implements MigrationInterface {
  name = 'Markings1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_object ADD COLUMN api_tlp smallint, ADD COLUMN claimed_tlp smallint, ADD COLUMN was_tlp smallint`);
    await queryRunner.query(`UPDATE intel_object SET api_tlp = 0 WHERE api_first_seen_at IS NOT NULL`);
    await queryRunner.query(`ALTER TABLE intel_object ADD COLUMN tlp smallint GENERATED ALWAYS AS (COALESCE(GREATEST(api_tlp, claimed_tlp), 0)) STORED`);
    await queryRunner.query(`ALTER TABLE intel_change ADD COLUMN tlp smallint NOT NULL DEFAULT 0, ADD COLUMN was_tlp smallint`);
    await queryRunner.query(`UPDATE intel_change SET was_tlp = 0 WHERE operation <> 'Add'`);
    await queryRunner.query(`ALTER TABLE sources_claim ADD COLUMN tlp smallint NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE auth_api_key ADD COLUMN max_tlp smallint NOT NULL DEFAULT 4`);
    await queryRunner.query(`ALTER TABLE intel_collection ADD COLUMN default_tlp smallint NOT NULL DEFAULT 0`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_collection DROP COLUMN default_tlp`);
    await queryRunner.query(`ALTER TABLE auth_api_key DROP COLUMN max_tlp`);
    await queryRunner.query(`ALTER TABLE sources_claim DROP COLUMN tlp`);
    await queryRunner.query(`ALTER TABLE intel_change DROP COLUMN tlp, DROP COLUMN was_tlp`);
    await queryRunner.query(`ALTER TABLE intel_object DROP COLUMN tlp, DROP COLUMN api_tlp, DROP COLUMN claimed_tlp, DROP COLUMN was_tlp`);
  }
}
