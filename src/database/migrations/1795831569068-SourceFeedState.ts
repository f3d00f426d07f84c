import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the feed kinds of sources (`taxii21`, `misp`) keep between successful runs (extensions §13):
 * TAXII's watermark, the raw `X-TAXII-Date-Added-Last` string, and per MISP event its timestamp and the
 * keys it gave. Written in a run's transaction with its claims, so it moves only with an applied run.
 */
export class SourceFeedState1795831569068 implements MigrationInterface {
  name = 'SourceFeedState1795831569068';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sources_source ADD COLUMN feed_state jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sources_source DROP COLUMN feed_state`);
  }
}
