import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Change records get their feed position (seq) after they commit, from the sequencer
 * (src/intel/change-sequencer.ts), instead of from a counter every writer locked until its commit.
 * A record is written with seq NULL and an id drawn from an identity at insert time; the sequencer
 * numbers committed records per collection in id order. Existing records keep their seq (and receive
 * ids in physical order), so positions issued before the upgrade keep their meaning.
 */
export class SequencedChanges1763800040000 implements MigrationInterface {
  name = 'SequencedChanges1763800040000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_change ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY`);
    await queryRunner.query(`
      ALTER TABLE intel_change
        DROP CONSTRAINT intel_change_pkey,
        ALTER COLUMN seq DROP NOT NULL,
        ADD CONSTRAINT intel_change_pkey PRIMARY KEY (id),
        ADD CONSTRAINT "UQ_intel_change_collection_seq" UNIQUE (collection_id, seq)`);
    // The records still waiting for their number: few at any time (those committed since the last pass),
    // so the sequencer and the feed's "anything pending?" check read a tiny index.
    await queryRunner.query(`CREATE INDEX "IDX_intel_change_pending" ON intel_change (id) WHERE seq IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Fails while records are still unnumbered: stop the service and let a pass finish first.
    await queryRunner.query(`DROP INDEX "IDX_intel_change_pending"`);
    await queryRunner.query(`
      ALTER TABLE intel_change
        DROP CONSTRAINT "UQ_intel_change_collection_seq",
        DROP CONSTRAINT intel_change_pkey,
        ALTER COLUMN seq SET NOT NULL,
        ADD CONSTRAINT intel_change_pkey PRIMARY KEY (collection_id, seq)`);
    await queryRunner.query(`ALTER TABLE intel_change DROP COLUMN id`);
  }
}
