import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a standard feed (TAXII 2.1, STIX 2.1) needs of the change feed, on existing rows too:
 *
 * - A UUID per object life (`intel_object.uid`, copied to each change record as `object_uid`), with the
 *   time of the life's first add (`added_at`, `object_added_at`): a STIX indicator's id and `created`.
 *   A re-add after a removal or an expiry is a new life. Existing records are assigned by replaying each
 *   collection's feed in id order (an Add starts a life; an Update or Remove continues the life owning
 *   one of its keys, or starts one when its Add was pruned).
 * - A time per feed position (`seq_at`), strictly increasing within a collection and at least two
 *   microseconds apart (the sequencer keeps that; see change-sequencer.ts): a TAXII `date_added`.
 *   Existing positions get the running maximum of their record's creation time, spaced by position, and
 *   never before their collection's creation; `intel_collection.last_seq_at` is the last one given.
 * - `intel_collection.taxii_id`: a UUIDv4 fixed at registration (a TAXII collection id).
 */
export class ObjectLifetimesAndFeedTimes1763800060000 implements MigrationInterface {
  name = 'ObjectLifetimesAndFeedTimes1763800060000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE intel_collection
        ADD COLUMN taxii_id uuid NOT NULL DEFAULT gen_random_uuid(),
        ADD COLUMN last_seq_at timestamptz NOT NULL DEFAULT now(),
        ADD CONSTRAINT "UQ_intel_collection_taxii_id" UNIQUE (taxii_id)`);
    await queryRunner.query(`
      ALTER TABLE intel_object
        ADD COLUMN uid uuid NOT NULL DEFAULT gen_random_uuid(),
        ADD COLUMN added_at timestamptz NOT NULL DEFAULT now()`);
    await queryRunner.query(`
      ALTER TABLE intel_change
        ADD COLUMN object_uid uuid,
        ADD COLUMN object_added_at timestamptz,
        ADD COLUMN seq_at timestamptz`);

    // Feed times of existing positions: g(k) = max over j <= k of (created_at(j) - 2 seq(j) µs), floored
    // at the collection's creation, is non-decreasing, so g(k) + 2 seq(k) µs strictly increases by at
    // least 2 µs per position and is never before the record's own creation.
    await queryRunner.query(`
      UPDATE intel_change ch SET seq_at = t.at
        FROM (SELECT x.id, GREATEST(c.created_at, max(x.created_at - x.seq * interval '2 microseconds')
                       OVER (PARTITION BY x.collection_id ORDER BY x.seq)) + x.seq * interval '2 microseconds' AS at
                FROM intel_change x JOIN intel_collection c ON c.id = x.collection_id
               WHERE x.seq IS NOT NULL) t
       WHERE ch.id = t.id`);
    await queryRunner.query(`
      UPDATE intel_collection c SET last_seq_at = GREATEST(c.created_at, (SELECT max(seq_at) FROM intel_change WHERE collection_id = c.id))`);

    await queryRunner.query(`
      DO $$
      DECLARE
        r record;
        life uuid;
        born timestamptz;
      BEGIN
        CREATE TEMP TABLE life_key (collection_id int, key_type text, value text, uid uuid, added_at timestamptz,
                                    PRIMARY KEY (collection_id, key_type, value)) ON COMMIT DROP;
        CREATE INDEX ON life_key (uid);
        FOR r IN SELECT id, collection_id, operation, object->'keys' AS keys, created_at FROM intel_change ORDER BY collection_id, id LOOP
          life := NULL;
          IF r.operation <> 'Add' THEN
            SELECT l.uid, l.added_at INTO life, born
              FROM jsonb_to_recordset(r.keys) AS k(type text, value text)
              JOIN life_key l ON l.collection_id = r.collection_id AND l.key_type = k.type AND l.value = k.value
             LIMIT 1;
          END IF;
          IF life IS NULL THEN
            life := gen_random_uuid();
            born := r.created_at;
          END IF;
          IF r.operation = 'Remove' THEN
            DELETE FROM life_key WHERE uid = life;
          ELSE
            INSERT INTO life_key
            SELECT r.collection_id, k.type, k.value, life, born FROM jsonb_to_recordset(r.keys) AS k(type text, value text)
            ON CONFLICT (collection_id, key_type, value) DO UPDATE SET uid = EXCLUDED.uid, added_at = EXCLUDED.added_at;
          END IF;
          UPDATE intel_change SET object_uid = life, object_added_at = born WHERE id = r.id;
        END LOOP;
        UPDATE intel_object o SET uid = l.uid, added_at = l.added_at
          FROM life_key l
         WHERE l.collection_id = o.collection_id AND l.key_type = o.keys->0->>'type' AND l.value = o.keys->0->>'value';
      END $$`);

    // Writers always give both (change-records.ts); the defaults make a record written otherwise (bulk
    // loads in tests and benchmarks) a life of its own, as an Add would be.
    await queryRunner.query(`
      ALTER TABLE intel_change
        ALTER COLUMN object_uid SET DEFAULT gen_random_uuid(),
        ALTER COLUMN object_uid SET NOT NULL,
        ALTER COLUMN object_added_at SET DEFAULT now(),
        ALTER COLUMN object_added_at SET NOT NULL`);
    // The versions of one object (TAXII match[id], match[version], versions) and positions by time (added_after).
    await queryRunner.query(`CREATE INDEX "IDX_intel_change_object_versions" ON intel_change (collection_id, object_uid, seq)`);
    await queryRunner.query(`CREATE INDEX "IDX_intel_change_seq_at" ON intel_change (collection_id, seq_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_intel_change_seq_at"`);
    await queryRunner.query(`DROP INDEX "IDX_intel_change_object_versions"`);
    await queryRunner.query(`ALTER TABLE intel_change DROP COLUMN seq_at, DROP COLUMN object_added_at, DROP COLUMN object_uid`);
    await queryRunner.query(`ALTER TABLE intel_object DROP COLUMN added_at, DROP COLUMN uid`);
    await queryRunner.query(`ALTER TABLE intel_collection DROP CONSTRAINT "UQ_intel_collection_taxii_id", DROP COLUMN last_seq_at, DROP COLUMN taxii_id`);
  }
}
