import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An enabled source's `next_run_at` is a time: a new or re-enabled source is stored with the time it became
 * due (src/sources/source-rows.repository.ts). Enabled sources stored before, still NULL (due at once), get
 * the time of this migration, which is as due; the schedule then needs no NULL case. Disabled ones get theirs
 * when re-enabled. Down: nothing to undo (a time at or before now is as due as NULL was).
 */
export class SourcesDueTime1795900000000 implements MigrationInterface {
  name = 'SourcesDueTime1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`UPDATE sources_source SET next_run_at = now() WHERE enabled AND next_run_at IS NULL`);
  }

  async down(): Promise<void> {}
}
