import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoMicros, isoUtc } from '../common/sql/timestamps.js';
import type { SightingKind } from './dto/sighting.dto.js';
import type { SightingItem } from './sighting-items.js';

/**
 * RECORD's parameters: one array per column (`keyTypes` to `clientIds`, one element per item), `positions`
 * the items' indexes, `shard` the tally's row this request adds into.
 */
const RECORD_PARAMETERS = namedParameters(['keyTypes', 'keyValues', 'kinds', 'sources', 'ats', 'counts', 'clientIds', 'positions', 'shard']);
const record = RECORD_PARAMETERS.$;

/**
 * Records the items (one array per column, one element per item, and their positions) in one statement and
 * returns the positions of those recorded (the others are duplicates by client id).
 *
 * Why it is exact under concurrent writers, on any number of instances, without reading anything into
 * the process first:
 * - `claimed` inserts the client ids with ON CONFLICT DO NOTHING: an id committed before is skipped; an id
 *   another transaction inserted but has not committed makes this one wait for it and is then skipped (or
 *   taken, if that one rolled back). So of any number of concurrent items with one id exactly one is
 *   recorded; only items without an id or with an id this statement inserted are `kept`.
 * - `summed` adds the kept counts into the per-key totals with INSERT … ON CONFLICT DO UPDATE, whose SET
 *   reads the row's latest committed version under its row lock (`s.count + excluded.count`), never a
 *   value read earlier: concurrent additions serialise on the row and none is lost. min/max likewise.
 * - `sourced` inserts each (key, source) once, with ON CONFLICT DO NOTHING as `claimed` does, and returns
 *   only the rows this statement inserted: a source another transaction inserted first (committed, or
 *   committed while this one waited on it) is not returned, one that rolled back is inserted here. So each
 *   row is returned by exactly one committed statement, the one that inserted it, and `summed` adds that
 *   statement's new sources per key into `sources` as it adds the counts: a key's `sources` is always its
 *   number of `sighting_source` rows (both commit together), which the summary of an object with one
 *   sighted key reads; the distinct sources of several keys are counted from the rows (sighting-sql.ts).
 * - `tallied` adds the request's total into one shard (`shard`) of the version of all summaries, the same way.
 * Each table's rows are written in key order (ORDER BY), and `sighting_source` before `sighting_summary`
 * (`summed` reads what `sourced` returned), so two requests locking overlapping keys lock them in the same
 * order and cannot deadlock. All of it commits or fails together (one statement).
 */
const RECORD = `
  WITH item AS (
    SELECT * FROM unnest(${record.keyTypes}::text[], ${record.keyValues}::text[], ${record.kinds}::text[], ${record.sources}::text[],
                         ${record.ats}::timestamptz[], ${record.counts}::bigint[], ${record.clientIds}::uuid[], ${record.positions}::int[])
      AS t(key_type, key_value, kind, source, at, count, client_id, i)
  ), claimed AS (
    INSERT INTO sighting_client_id (id, at)
    SELECT client_id, at FROM item WHERE client_id IS NOT NULL ORDER BY client_id
    ON CONFLICT DO NOTHING
    RETURNING id
  ), kept AS (
    SELECT * FROM item WHERE client_id IS NULL OR client_id IN (SELECT id FROM claimed)
  ), raw AS (
    INSERT INTO sighting (key_type, key_value, kind, source, at, count)
    SELECT key_type, key_value, kind, source, at, count FROM kept
  ), sourced AS (
    INSERT INTO sighting_source (key_type, key_value, source)
    SELECT DISTINCT key_type, key_value, source FROM kept ORDER BY key_type, key_value, source
    ON CONFLICT DO NOTHING
    RETURNING key_type, key_value
  ), added AS (
    SELECT key_type, key_value, count(*) AS sources FROM sourced GROUP BY key_type, key_value
  ), summed AS (
    INSERT INTO sighting_summary AS s (key_type, key_value, count, false_positives, first_at, last_at, sources)
    SELECT key_type, key_value,
           coalesce(sum(count) FILTER (WHERE kind = 'sighting'), 0), coalesce(sum(count) FILTER (WHERE kind = 'falsePositive'), 0),
           min(at) FILTER (WHERE kind = 'sighting'), max(at) FILTER (WHERE kind = 'sighting'),
           coalesce(max(added.sources), 0)
      FROM kept LEFT JOIN added USING (key_type, key_value) GROUP BY key_type, key_value ORDER BY key_type, key_value
    ON CONFLICT (key_type, key_value) DO UPDATE
       SET count = s.count + excluded.count, false_positives = s.false_positives + excluded.false_positives,
           first_at = least(s.first_at, excluded.first_at), last_at = greatest(s.last_at, excluded.last_at),
           sources = s.sources + excluded.sources
  ), tallied AS (
    INSERT INTO sighting_tally AS t (shard, total) SELECT ${record.shard}::smallint, sum(count) FROM kept HAVING count(*) > 0
    ON CONFLICT (shard) DO UPDATE SET total = t.total + excluded.total
  )
  SELECT i FROM kept`;

/** Rows of the tally: concurrent requests mostly add into different ones. */
const TALLY_SHARDS = 16;

/** A listed sighting with its position: `at` to the microsecond (UTC text) and the row id. */
export interface SightingRow {
  id: string;
  position: string;
  at: string;
  kind: SightingKind;
  source: string;
  count: string;
}

export interface SightingFilter {
  since: Date | null;
  until: Date | null;
  source: string | null;
  kind: SightingKind | null;
}

/** LIST's parameters: the key, the filters (null: none), the position after which to start (null: the first page), the rows. */
const LIST_PARAMETERS = namedParameters(['keyType', 'keyValue', 'since', 'until', 'source', 'kind', 'afterTime', 'afterId', 'limit']);
const list = LIST_PARAMETERS.$;

/** Newest first for one key (index sighting_key_newest), from after the position `afterTime`/`afterId` when given. */
const LIST = `
  SELECT id::text, ${isoMicros('at')} AS position, ${isoUtc('at')} AS at, kind, source, count::text
    FROM sighting
   WHERE key_type = ${list.keyType} AND key_value = ${list.keyValue}
     AND (${list.since}::timestamptz IS NULL OR at >= ${list.since}) AND (${list.until}::timestamptz IS NULL OR at < ${list.until})
     AND (${list.source}::text IS NULL OR source = ${list.source}) AND (${list.kind}::text IS NULL OR kind = ${list.kind})
     AND (${list.afterTime}::timestamptz IS NULL OR (at, id) < (${list.afterTime}, ${list.afterId}::bigint))
   ORDER BY at DESC, id DESC
   LIMIT ${list.limit}`;

/** The jobs' parameters: rows older than `before` (a cut-off), at most `batch` of them per statement. */
const BATCH_PARAMETERS = namedParameters(['before', 'batch']);
const batch = BATCH_PARAMETERS.$;

/**
 * Rolls up at most `batch` raw items older than `before` into their hours (UTC), one sum per key, source and kind:
 * the items are deleted and their counts added into the hour's row in one statement, so a run cut short
 * anywhere leaves every count exactly once, and running it again finds nothing more to do. Writers only
 * insert raw items; one that commits an old item meanwhile is rolled up by a later run.
 */
const ROLL_UP = `
  WITH due AS (
    DELETE FROM sighting WHERE id IN (SELECT id FROM sighting WHERE NOT hourly AND at < ${batch.before} ORDER BY at LIMIT ${batch.batch})
    RETURNING key_type, key_value, kind, source, at, count
  ), hours AS (
    INSERT INTO sighting AS h (key_type, key_value, kind, source, at, count, hourly)
    SELECT key_type, key_value, kind, source, date_trunc('hour', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', sum(count), true
      FROM due GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (key_type, key_value, source, kind, at) WHERE hourly DO UPDATE SET count = h.count + excluded.count
  )
  SELECT count(*)::int AS n FROM due`;

/** Removes at most `batch` items or roll-ups older than `before` (the summaries keep their totals). */
const PRUNE = `
  WITH gone AS (DELETE FROM sighting WHERE id IN (SELECT id FROM sighting WHERE at < ${batch.before} ORDER BY at LIMIT ${batch.batch}) RETURNING 1)
  SELECT count(*)::int AS n FROM gone`;

/** Client ids of items older than `before` can go: an item that old is refused before its id is looked at. */
const PRUNE_IDS = `
  WITH gone AS (DELETE FROM sighting_client_id WHERE id IN (SELECT id FROM sighting_client_id WHERE at < ${batch.before} ORDER BY at LIMIT ${batch.batch}) RETURNING 1)
  SELECT count(*)::int AS n FROM gone`;

@Injectable()
export class SightingsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Records the items; returns the indexes (into `items`) of those recorded, i.e. not duplicates by id. */
  async record(items: readonly SightingItem[]): Promise<number[]> {
    const rows: { i: number }[] = await this.dataSource.query(
      RECORD,
      RECORD_PARAMETERS.values({
        keyTypes: items.map((item) => item.key.type),
        keyValues: items.map((item) => item.key.value),
        kinds: items.map((item) => item.kind),
        sources: items.map((item) => item.source),
        ats: items.map((item) => item.at),
        counts: items.map((item) => item.count),
        clientIds: items.map((item) => item.id),
        positions: items.map((_, index) => index),
        shard: Math.floor(Math.random() * TALLY_SHARDS),
      }),
    );
    return rows.map((row) => row.i);
  }

  async list(type: string, value: string, filter: SightingFilter, after: { t: string; i: string } | undefined, limit: number): Promise<SightingRow[]> {
    return this.dataSource.query(
      LIST,
      LIST_PARAMETERS.values({ keyType: type, keyValue: value, ...filter, afterTime: after?.t ?? null, afterId: after?.i ?? null, limit }),
    );
  }

  /** One batch of a job step (`before` the cut-off, `batch` the batch size): how many rows it handled. */
  async rollUp(manager: EntityManager, before: Date, batch: number): Promise<number> {
    return ((await manager.query(ROLL_UP, BATCH_PARAMETERS.values({ before, batch }))) as { n: number }[])[0].n;
  }

  async prune(manager: EntityManager, before: Date, batch: number): Promise<number> {
    return ((await manager.query(PRUNE, BATCH_PARAMETERS.values({ before, batch }))) as { n: number }[])[0].n;
  }

  async pruneClientIds(manager: EntityManager, before: Date, batch: number): Promise<number> {
    return ((await manager.query(PRUNE_IDS, BATCH_PARAMETERS.values({ before, batch }))) as { n: number }[])[0].n;
  }
}
