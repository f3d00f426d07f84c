import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sightings (extensions §14, src/sightings), stored once per key (not per collection or object):
 * - `sighting`: the items as recorded (`hourly` false) and, once older than SIGHTING_RAW_DAYS, their hourly
 *   roll-ups per key, source and kind (`hourly` true, `at` the hour's start; unique, so the roll-up job
 *   adds into an hour with ON CONFLICT). Listed newest first per key; pruned by `at`.
 * - `sighting_client_id`: every client `id` recorded, with its item's `at` (pruned with the items): the
 *   primary key makes an id count once across requests and instances.
 * - `sighting_summary`: per key the running totals the summaries add up, upserted by each request.
 * - `sighting_source`: per key every source seen, so that an object's number of distinct sources over all
 *   its keys is exact (a per-key count could not be added across keys).
 * - `sighting_tally`: the sum of all counts ever recorded, in a few shards: a version of every summary at
 *   once, for the ETags of exports filtered by sightings (src/sightings/sighting-filter.ts).
 * Text compared in byte order (COLLATE "C"): keys are normalised values, never sorted for people.
 */
export class Sightings1795820044558 implements MigrationInterface {
  name = 'Sightings1795820044558';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sighting (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key_type text COLLATE "C" NOT NULL,
        key_value text COLLATE "C" NOT NULL,
        kind text NOT NULL CHECK (kind IN ('sighting', 'falsePositive')),
        source text COLLATE "C" NOT NULL,
        at timestamptz NOT NULL,
        count bigint NOT NULL CHECK (count > 0),
        hourly boolean NOT NULL DEFAULT false
      )`);
    await queryRunner.query(`CREATE INDEX sighting_key_newest ON sighting (key_type, key_value, at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX sighting_at ON sighting (at) INCLUDE (hourly)`);
    await queryRunner.query(`CREATE UNIQUE INDEX sighting_hour ON sighting (key_type, key_value, source, kind, at) WHERE hourly`);
    await queryRunner.query(`CREATE TABLE sighting_client_id (id uuid PRIMARY KEY, at timestamptz NOT NULL)`);
    await queryRunner.query(`CREATE INDEX sighting_client_id_at ON sighting_client_id (at)`);
    await queryRunner.query(`
      CREATE TABLE sighting_summary (
        key_type text COLLATE "C" NOT NULL,
        key_value text COLLATE "C" NOT NULL,
        count bigint NOT NULL,
        false_positives bigint NOT NULL,
        first_at timestamptz,
        last_at timestamptz,
        PRIMARY KEY (key_type, key_value)
      )`);
    await queryRunner.query(`
      CREATE TABLE sighting_source (
        key_type text COLLATE "C" NOT NULL,
        key_value text COLLATE "C" NOT NULL,
        source text COLLATE "C" NOT NULL,
        PRIMARY KEY (key_type, key_value, source)
      )`);
    await queryRunner.query(`CREATE TABLE sighting_tally (shard smallint PRIMARY KEY, total bigint NOT NULL)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sighting_tally, sighting_source, sighting_summary, sighting_client_id, sighting`);
  }
}
