import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Object history and the api claim (extensions §13 "Claims", §14).
 *
 * History reads the change records themselves (kept HISTORY_RETENTION_DAYS; the feed only moves its
 * pruned position at CHANGES_RETENTION_DAYS, see CONTRIBUTING.md, "The change feed"). A key's lives are
 * the live object holding it (its key row) and the lives that ended: their `Remove` record holds every key
 * they ever had (keys only join an object and leave with it), so a GIN index over the keys of Remove
 * records finds them; no index is added to what adds and updates write. A life's records are then read
 * by the existing (collection_id, object_uid, seq) index.
 *
 * The api claim's first and last native write live on the object row, written by the statements that
 * write the object. Objects stored before this migration were all written by native writes: first seen is
 * the life's first add, last seen the time of its last change record (its first add when none is left).
 * The UPDATE rewrites intel_object once (a long migration on a large table; nothing reads a half state).
 */
export class ObjectHistoryAndApiClaim1795822421408 implements MigrationInterface {
  name = 'ObjectHistoryAndApiClaim1795822421408';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_object ADD COLUMN api_first_seen_at timestamptz, ADD COLUMN api_last_seen_at timestamptz`);
    await queryRunner.query(
      `UPDATE intel_object o
          SET api_first_seen_at = o.added_at,
              api_last_seen_at = GREATEST(o.added_at, (SELECT max(ch.created_at) FROM intel_change ch
                                                         WHERE ch.collection_id = o.collection_id AND ch.object_uid = o.uid))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_intel_change_removed_keys" ON intel_change USING gin ((object -> 'keys') jsonb_path_ops) WHERE operation = 'Remove'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_intel_change_removed_keys"`);
    await queryRunner.query(`ALTER TABLE intel_object DROP COLUMN api_first_seen_at, DROP COLUMN api_last_seen_at`);
  }
}
