import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddResourceChildrenIndex1763800020000 implements MigrationInterface {
  name = 'AddResourceChildrenIndex1763800020000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The children of one parent in id order, top-level resources under 0 (ids start at 1): a listing page
    // is one walk of this index from (parent, cursor). Without it, listing the few top-level resources
    // walked every collection's resource by the primary key to find that no more top-level ones follow.
    await queryRunner.query(`CREATE INDEX "IDX_auth_resource_children" ON auth_resource ((COALESCE(parent_id, 0)), id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_auth_resource_children"`);
  }
}
