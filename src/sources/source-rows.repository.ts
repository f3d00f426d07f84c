import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoUtc } from '../common/sql/timestamps.js';
import { credibilityValue, reliabilityValue } from '../scoring/admiralty.js';
import { BUMP_SCORE_VERSION } from '../scoring/score-sql.js';
import type { FeedState } from './source-feeds.js';
import { SOURCE_NAME_PATTERN, type SourceForm, type SourceSettings } from './source-form.js';
import { SourcesErrors } from './sources.errors.js';

/** A source as stored, with its claims counted. Secrets are read only by the runs. */
export interface SourceRow extends SourceForm {
  id: number;
  version: number;
  nextRunAt: string | null;
  leaseRunId: string | null;
  lastRunAt: string | null;
  lastSuccessAt: string | null;
  consecutiveFailures: number;
  etag: string | null;
  lastModified: string | null;
  bodyDigest: string | null;
  /** What a feed kind (`taxii21`, `misp`) kept from its last success: read for a run's lease only (it can be large). */
  feedState?: FeedState | null;
  claims: number;
}

/**
 * The columns of a SourceRow, from `sources_source s`. Settings stored before a member existed read with its
 * default (`tlp`: a source made before markings marks its claims TLP:CLEAR, as they were migrated; the Admiralty
 * code: F and 6, the columns' defaults).
 */
export const SOURCE_COLUMNS = `s.id, s.name, s.collection, s.kind, s.enabled, s.interval_seconds AS "intervalSeconds",
  '{"tlp": "TLP:CLEAR", "reliability": "F", "credibility": 6}'::jsonb || s.settings AS settings, s.secrets,
  s.version, ${isoUtc('s.next_run_at')} AS "nextRunAt", s.lease_run_id AS "leaseRunId", ${isoUtc('s.last_run_at')} AS "lastRunAt",
  ${isoUtc('s.last_success_at')} AS "lastSuccessAt", s.consecutive_failures AS "consecutiveFailures", s.etag,
  s.last_modified AS "lastModified", s.body_digest AS "bodyDigest",
  (SELECT count(*)::int FROM sources_claim c WHERE c.source_id = s.id) AS claims`;

/** A feed kind's state, read with a run's lease only. */
export const FEED_STATE = `s.feed_state AS "feedState"`;

/**
 * The settings that change no reading of the feed (taken from one form to compare two without them): those
 * that weigh a run's removals only, and the Admiralty code its claims are scored by.
 */
const UNREAD = (settings: SourceSettings) => ({
  removal: settings.removal,
  maxRemovalRatio: settings.maxRemovalRatio,
  minItems: settings.minItems,
  reliability: settings.reliability,
  credibility: settings.credibility,
});

/** The Admiralty values of a form, as the score reads them from the source's columns (extensions §18). */
const admiraltyValues = (form: SourceForm) => ({
  reliability: reliabilityValue(form.settings.reliability),
  credibility: credibilityValue(form.settings.credibility),
});

function isNameTaken(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && driverError.constraint === 'UQ_sources_source_name';
}

const INSERT_PARAMETERS = namedParameters(['name', 'collection', 'kind', 'enabled', 'intervalSeconds', 'settings', 'secrets', 'reliability', 'credibility']);
const I = INSERT_PARAMETERS.$;

/**
 * A new source is due at once: its next_run_at is the time it became due (its view shows that time rather
 * than none, extensions §13). The unique index decides a race on the name.
 */
const INSERT = `INSERT INTO sources_source (name, collection, kind, enabled, interval_seconds, settings, secrets, reliability, credibility, next_run_at)
  VALUES (${I.name}, ${I.collection}, ${I.kind}, ${I.enabled}, ${I.intervalSeconds}, ${I.settings}, ${I.secrets}, ${I.reliability}, ${I.credibility}, now())`;

const BY_NAME_PARAMETERS = namedParameters(['name']);
const N = BY_NAME_PARAMETERS.$;

const FIND = `SELECT ${SOURCE_COLUMNS} FROM sources_source s WHERE s.name = ${N.name}`;
/** The row locked for a change (PATCH) or a deletion: the other of two such requests waits and reads it again. */
const FIND_FOR_UPDATE = `${FIND} FOR UPDATE`;
const LOCATE = `SELECT id, collection FROM sources_source WHERE name = ${N.name}`;

const LIST_PARAMETERS = namedParameters(['afterId', 'limit', 'collections']);
const L = LIST_PARAMETERS.$;

const LIST = `SELECT ${SOURCE_COLUMNS} FROM sources_source s
  WHERE s.id > ${L.afterId} AND (${L.collections}::text[] IS NULL OR s.collection = ANY(${L.collections}::text[])) ORDER BY s.id LIMIT ${L.limit}`;

const UPDATE_PARAMETERS = namedParameters(['id', 'kind', 'enabled', 'intervalSeconds', 'settings', 'secrets', 'reliability', 'credibility', 'reread']);
const U = UPDATE_PARAMETERS.$;

/**
 * A form's change. Re-enabling (enabled now, not before) makes the source due at once, as of now (the time
 * its view shows), and forgets its failures; `reread` drops what described the old reading of the feed.
 */
const UPDATE = `UPDATE sources_source SET kind = ${U.kind}, enabled = ${U.enabled}, interval_seconds = ${U.intervalSeconds}, settings = ${U.settings},
         secrets = ${U.secrets}, reliability = ${U.reliability}, credibility = ${U.credibility}, version = version + 1,
         next_run_at = CASE WHEN ${U.enabled} AND NOT enabled THEN now() ELSE next_run_at END,
         consecutive_failures = CASE WHEN ${U.enabled} AND NOT enabled THEN 0 ELSE consecutive_failures END,
         etag = CASE WHEN ${U.reread} THEN NULL ELSE etag END, last_modified = CASE WHEN ${U.reread} THEN NULL ELSE last_modified END,
         body_digest = CASE WHEN ${U.reread} THEN NULL ELSE body_digest END, feed_state = CASE WHEN ${U.reread} THEN NULL ELSE feed_state END
   WHERE id = ${U.id}`;

const BY_ID_PARAMETERS = namedParameters(['id']);

const DELETE = `DELETE FROM sources_source WHERE id = ${BY_ID_PARAMETERS.$.id}`;

/** Per source, for the metrics: its last success (epoch seconds, null: never) and its claims. */
const GAUGES = `SELECT s.name, extract(epoch FROM s.last_success_at)::float8 AS "lastSuccess",
         (SELECT count(*)::int FROM sources_claim c WHERE c.source_id = s.id) AS claims
    FROM sources_source s ORDER BY s.id`;

/** The source rows: the form as stored, read for views and runs. Leases and the run log are SourceRunsRepository's. */
@Injectable()
export class SourceRowsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(form: SourceForm): Promise<void> {
    try {
      await this.dataSource.query(INSERT, INSERT_PARAMETERS.values({ ...form, ...admiraltyValues(form) }));
    } catch (error) {
      if (isNameTaken(error)) throw SourcesErrors.duplicate(form.name);
      throw error;
    }
  }

  async find(name: string, manager: EntityManager | DataSource = this.dataSource, lock = false): Promise<SourceRow | undefined> {
    // A name no source can have (a path parameter's NUL or 2,000 characters) names none, without asking.
    if (!SOURCE_NAME_PATTERN.test(name)) return undefined;
    const rows: SourceRow[] = await manager.query(lock ? FIND_FOR_UPDATE : FIND, BY_NAME_PARAMETERS.values({ name }));
    return rows[0];
  }

  /**
   * A source's id and collection, without counting its claims (`find` does, for views): what the access
   * rule, the run log and the claims pages need, read on every poll of a run's progress.
   */
  async locate(name: string): Promise<{ id: number; collection: string } | undefined> {
    if (!SOURCE_NAME_PATTERN.test(name)) return undefined;
    const rows: { id: number; collection: string }[] = await this.dataSource.query(LOCATE, BY_NAME_PARAMETERS.values({ name }));
    return rows[0];
  }

  /** Sources in creation order after `afterId`, only of `collections` unless null (every one). */
  async list(afterId: number, limit: number, collections: string[] | null): Promise<SourceRow[]> {
    return this.dataSource.query(LIST, LIST_PARAMETERS.values({ afterId, limit, collections }));
  }

  /**
   * Writes the form; the version moves only with a real change. Re-enabling makes the source due at once
   * (extensions §13); an interval change takes effect from the next scheduled run. A change of the Admiralty
   * values moves the scores of its claims' objects, which no change record says: the score version moves.
   */
  async update(manager: EntityManager, before: SourceRow, form: SourceForm): Promise<void> {
    const same =
      form.kind === before.kind &&
      form.enabled === before.enabled &&
      form.intervalSeconds === before.intervalSeconds &&
      // Whatever the member order (jsonb keeps its own).
      isDeepStrictEqual(form.settings, before.settings) &&
      isDeepStrictEqual(form.secrets, before.secrets);
    if (same) return;
    // Another feed (url, collectionID, kind) or another reading of it (columns, fields, context, page
    // size...): the stored validators, digest and feed state describe what the old settings read, so a 304
    // or a repeat digest would keep the new settings from ever reading the body. The guard members only
    // weigh a run's removals, the Admiralty code only its claims' scores; they keep them.
    const reread =
      form.kind !== before.kind || !isDeepStrictEqual({ ...form.settings, ...UNREAD(form.settings) }, { ...before.settings, ...UNREAD(form.settings) });
    const values = admiraltyValues(form);
    await manager.query(UPDATE, UPDATE_PARAMETERS.values({ ...form, ...values, id: before.id, reread }));
    if (!isDeepStrictEqual(values, admiraltyValues(before))) await manager.query(BUMP_SCORE_VERSION);
  }

  /** Deletes the source row (its runs go with it); its claims are ended first (ClaimSettlementRepository.endAll). */
  async delete(manager: EntityManager, source: SourceRow): Promise<void> {
    await manager.query(DELETE, BY_ID_PARAMETERS.values({ id: source.id }));
  }

  /** Per source, for the metrics: its last success (epoch seconds, null: never) and its claims. */
  async gauges(): Promise<{ name: string; lastSuccess: number | null; claims: number }[]> {
    return this.dataSource.query(GAUGES);
  }
}
