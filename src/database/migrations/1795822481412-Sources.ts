import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sources (extensions §13): the sources, their run log and their claims, and `Withdrawn` as a reason of a
 * Remove record (the end of an object's last claim).
 *
 * - `sources_source.settings` holds the form without its secrets; `secrets` the header values and the
 *   password (write-only: never read into a view). `collection` is the collection's name, which never changes.
 * - The schedule's lease: a run holds `lease_run_id` until `lease_until` (renewed while it runs); a lease
 *   left to expire is a run another instance takes over. `next_run_at` NULL: due now.
 * - Claims are per source and object key; objects written before this migration have no source claim and
 *   keep their `api` claim through their change records (BatchRepository.nativelyClaimed).
 */
export class Sources1795822481412 implements MigrationInterface {
  name = 'Sources1795822481412';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE intel_change DROP CONSTRAINT intel_change_reason_check`);
    await queryRunner.query(`ALTER TABLE intel_change ADD CONSTRAINT intel_change_reason_check CHECK (reason IN ('Deleted', 'Expired', 'Withdrawn'))`);
    await queryRunner.query(`
      CREATE TABLE sources_source (
        id serial PRIMARY KEY,
        name text NOT NULL CONSTRAINT "UQ_sources_source_name" UNIQUE,
        collection text NOT NULL,
        kind text NOT NULL,
        enabled boolean NOT NULL,
        interval_seconds integer NOT NULL,
        settings jsonb NOT NULL,
        secrets jsonb NOT NULL,
        version integer NOT NULL DEFAULT 1,
        next_run_at timestamptz,
        lease_run_id uuid,
        lease_until timestamptz,
        lease_trigger text,
        lease_key_id integer,
        last_run_at timestamptz,
        last_success_at timestamptz,
        consecutive_failures integer NOT NULL DEFAULT 0,
        etag text,
        last_modified text,
        body_digest text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE sources_run (
        id uuid PRIMARY KEY,
        source_id integer NOT NULL REFERENCES sources_source (id) ON DELETE CASCADE,
        trigger text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
        started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        finished_at timestamptz,
        outcome text CHECK (outcome IN ('ok', 'notModified', 'unchanged', 'suspect', 'failed')),
        http_status integer,
        bytes bigint,
        items integer NOT NULL DEFAULT 0,
        added integer NOT NULL DEFAULT 0,
        updated integer NOT NULL DEFAULT 0,
        withdrawn integer NOT NULL DEFAULT 0,
        rejected integer NOT NULL DEFAULT 0,
        rejections jsonb NOT NULL DEFAULT '[]',
        error jsonb
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_sources_run_source_started" ON sources_run (source_id, started_at DESC, id DESC)`);
    await queryRunner.query(`
      CREATE TABLE sources_claim (
        source_id integer NOT NULL REFERENCES sources_source (id) ON DELETE CASCADE,
        key_type text NOT NULL,
        value text NOT NULL,
        first_seen_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        missed_runs integer NOT NULL DEFAULT 0,
        PRIMARY KEY (source_id, key_type, value)
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_sources_claim_key" ON sources_claim (key_type, value)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sources_claim`);
    await queryRunner.query(`DROP TABLE sources_run`);
    await queryRunner.query(`DROP TABLE sources_source`);
    await queryRunner.query(`UPDATE intel_change SET reason = 'Deleted' WHERE reason = 'Withdrawn'`);
    await queryRunner.query(`ALTER TABLE intel_change DROP CONSTRAINT intel_change_reason_check`);
    await queryRunner.query(`ALTER TABLE intel_change ADD CONSTRAINT intel_change_reason_check CHECK (reason IN ('Deleted', 'Expired'))`);
  }
}
