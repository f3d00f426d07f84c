import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoUtc } from '../common/sql/timestamps.js';
import type { FeedState } from './source-feeds.js';
import { FEED_STATE, SOURCE_COLUMNS, type SourceRow } from './source-rows.repository.js';

export interface RunRow {
  runID: string;
  trigger: 'schedule' | 'manual';
  startedAt: string;
  finishedAt: string | null;
  outcome: string | null;
  httpStatus: number | null;
  bytes: number | null;
  items: number;
  added: number;
  updated: number;
  withdrawn: number;
  rejected: number;
  rejections: { line?: number; value: string; reason: string }[];
  error: { code: string; message: string } | null;
}

/** What closing a run writes into its log row. */
export type FinishedRun = Omit<RunRow, 'runID' | 'trigger' | 'startedAt' | 'finishedAt'>;

/** A run's lease: its id, the source, and who started it. */
export interface Lease {
  runID: string;
  source: SourceRow;
  trigger: 'schedule' | 'manual';
  keyID: number | null;
}

/** The validators, digest and feed state a successful run keeps for the next one. */
export interface RunValidators {
  etag: string | null;
  lastModified: string | null;
  bodyDigest: string | null;
  feedState?: FeedState;
}

const RUN_COLUMNS = `r.id AS "runID", r.trigger, ${isoUtc('r.started_at')} AS "startedAt", ${isoUtc('r.finished_at')} AS "finishedAt", r.outcome,
  r.http_status AS "httpStatus", r.bytes::float8 AS bytes, r.items, r.added, r.updated, r.withdrawn, r.rejected, r.rejections, r.error`;

/** Closes the run of a lease taken over (`taken.abandoned`): failed, nothing of it was written. */
const CLOSE_ABANDONED = `UPDATE sources_run SET finished_at = clock_timestamp(), outcome = 'failed',
    error = '{"code":"LeaseExpired","message":"the instance running it stopped renewing its lease; another instance took the run over"}'
   FROM taken WHERE sources_run.id = taken.abandoned AND sources_run.finished_at IS NULL`;

const LEASE_NOW_PARAMETERS = namedParameters(['name', 'runID', 'keyID', 'leaseSeconds']);
const M = LEASE_NOW_PARAMETERS.$;

/**
 * A manual run's lease and its run row, in one statement: only when no run holds a live lease (a
 * concurrent claim waits for the row and re-checks the lease on its new version, so one of two wins).
 * A lease left to expire by a killed instance is taken over; its run is closed as failed.
 */
const LEASE_NOW = `WITH s AS (SELECT id, lease_run_id AS abandoned FROM sources_source WHERE name = ${M.name}),
  taken AS (
    UPDATE sources_source t SET lease_run_id = ${M.runID}, lease_until = now() + make_interval(secs => ${M.leaseSeconds}), lease_trigger = 'manual',
           lease_key_id = ${M.keyID}
      FROM s WHERE t.id = s.id AND (t.lease_until IS NULL OR t.lease_until < now())
    RETURNING t.id, s.abandoned
  ),
  closed AS (${CLOSE_ABANDONED}),
  run AS (INSERT INTO sources_run (id, source_id, trigger) SELECT ${M.runID}, id, 'manual' FROM taken)
  SELECT s.id, EXISTS (SELECT 1 FROM taken) AS taken FROM s`;

const LEASE_DUE_PARAMETERS = namedParameters(['runID', 'leaseSeconds']);
const D = LEASE_DUE_PARAMETERS.$;

/**
 * The lease of one due source, for the schedule: enabled, no live lease, and due (or holding an expired
 * lease: a run a killed instance left, taken over). FOR UPDATE SKIP LOCKED makes concurrent instances
 * take different rows; a row another claimer committed meanwhile is re-checked on its new version (its
 * lease is then live) and skipped, so each due time gives exactly one run. A due run moves next_run_at
 * by the interval at once; a failure moves it again (back-off). An enabled source always has a next_run_at
 * (migration SourcesDueTime).
 */
const LEASE_DUE = `WITH due AS (
    SELECT id, lease_run_id AS abandoned FROM sources_source
     WHERE enabled AND (lease_until IS NULL OR lease_until < now())
       AND (next_run_at <= now() OR lease_run_id IS NOT NULL)
     ORDER BY next_run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
  ),
  taken AS (
    UPDATE sources_source t SET lease_run_id = ${D.runID}, lease_until = now() + make_interval(secs => ${D.leaseSeconds}), lease_trigger = 'schedule',
           lease_key_id = NULL,
           next_run_at = CASE WHEN t.next_run_at <= now() THEN now() + make_interval(secs => t.interval_seconds) ELSE t.next_run_at END
      FROM due WHERE t.id = due.id
    RETURNING t.id, due.abandoned
  ),
  closed AS (${CLOSE_ABANDONED}),
  run AS (INSERT INTO sources_run (id, source_id, trigger) SELECT ${D.runID}, id, 'schedule' FROM taken)
  SELECT id FROM taken`;

const BY_ID_PARAMETERS = namedParameters(['id']);

/** The source a run leases, with its feed state. */
const LEASED_SOURCE = `SELECT ${SOURCE_COLUMNS}, ${FEED_STATE} FROM sources_source s WHERE s.id = ${BY_ID_PARAMETERS.$.id}`;

const BY_RUN_PARAMETERS = namedParameters(['runID']);

const SOURCE_OF_LEASE = `SELECT ${SOURCE_COLUMNS}, ${FEED_STATE}, s.lease_trigger AS "leaseTrigger", s.lease_key_id AS "leaseKeyId"
  FROM sources_source s WHERE s.lease_run_id = ${BY_RUN_PARAMETERS.$.runID}`;

const RENEW_PARAMETERS = namedParameters(['runID', 'leaseSeconds']);

const RENEW = `UPDATE sources_source SET lease_until = now() + make_interval(secs => ${RENEW_PARAMETERS.$.leaseSeconds})
  WHERE lease_run_id = ${RENEW_PARAMETERS.$.runID}`;

const SUCCESS_PARAMETERS = namedParameters(['sourceId', 'keep', 'etag', 'lastModified', 'bodyDigest', 'leaseSeconds', 'feedState']);
const S = SUCCESS_PARAMETERS.$;

/**
 * A successful run's state: `keep` says whether it stores validators and digest (false: a 304 or a repeat
 * keeps those stored), a feed state replaces the stored one. The lease is renewed from this moment (see
 * recordSuccess).
 */
const RECORD_SUCCESS = `UPDATE sources_source SET last_success_at = now(), consecutive_failures = 0,
         etag = CASE WHEN ${S.keep} THEN ${S.etag} ELSE etag END, last_modified = CASE WHEN ${S.keep} THEN ${S.lastModified} ELSE last_modified END,
         body_digest = CASE WHEN ${S.keep} THEN ${S.bodyDigest} ELSE body_digest END, feed_state = COALESCE(${S.feedState}, feed_state),
         lease_until = CASE WHEN lease_run_id IS NOT NULL THEN clock_timestamp() + make_interval(secs => ${S.leaseSeconds}) END
   WHERE id = ${S.sourceId}`;

const SUSPECT_PARAMETERS = namedParameters(['sourceId', 'leaseSeconds']);

const RECORD_SUSPECT = `UPDATE sources_source SET etag = NULL, last_modified = NULL, body_digest = NULL,
         lease_until = CASE WHEN lease_run_id IS NOT NULL THEN clock_timestamp() + make_interval(secs => ${SUSPECT_PARAMETERS.$.leaseSeconds}) END
   WHERE id = ${SUSPECT_PARAMETERS.$.sourceId}`;

const FINISH_PARAMETERS = namedParameters([
  'runID',
  'outcome',
  'httpStatus',
  'bytes',
  'items',
  'added',
  'updated',
  'withdrawn',
  'rejected',
  'rejections',
  'error',
  'failed',
  'retryAfterSeconds',
  'interrupted',
]);
const F = FINISH_PARAMETERS.$;

/**
 * Closes a run (its row, the source's last run, failures and lease) if the run still holds its lease. A
 * failed scheduled run moves next_run_at by the back-off; an interrupted one is due again at once.
 */
const FINISH = `WITH r AS (
    UPDATE sources_run SET finished_at = clock_timestamp(), outcome = ${F.outcome}, http_status = ${F.httpStatus}, bytes = ${F.bytes}, items = ${F.items},
           added = ${F.added}, updated = ${F.updated}, withdrawn = ${F.withdrawn}, rejected = ${F.rejected}, rejections = ${F.rejections}, error = ${F.error}
     WHERE id = ${F.runID} RETURNING source_id
  )
  UPDATE sources_source s SET last_run_at = now(), lease_run_id = NULL, lease_until = NULL, lease_trigger = NULL, lease_key_id = NULL,
         consecutive_failures = CASE WHEN ${F.failed} THEN s.consecutive_failures + 1 ELSE s.consecutive_failures END,
         next_run_at = CASE WHEN ${F.failed} AND s.lease_trigger = 'schedule'
           THEN now() + make_interval(secs => GREATEST(
                  LEAST(86400, s.interval_seconds * power(2, LEAST(s.consecutive_failures, 20))), s.interval_seconds, COALESCE(${F.retryAfterSeconds}, 0)))
           WHEN ${F.interrupted} AND s.lease_trigger = 'schedule' THEN now() ELSE s.next_run_at END
    FROM r WHERE s.id = r.source_id AND s.lease_run_id = ${F.runID}`;

const RUNS_PARAMETERS = namedParameters(['sourceId', 'afterStartedAt', 'afterId', 'limit']);
const R = RUNS_PARAMETERS.$;

/** A page of the run log, newest first, after the keyset (started_at, id) unless it is null. */
const RUNS = `SELECT ${RUN_COLUMNS}, r.started_at::text AS "sortAt" FROM sources_run r
   WHERE r.source_id = ${R.sourceId} AND (${R.afterStartedAt}::timestamptz IS NULL OR (r.started_at, r.id) < (${R.afterStartedAt}::timestamptz, ${R.afterId}::uuid))
   ORDER BY r.started_at DESC, r.id DESC LIMIT ${R.limit}`;

/** The run log is kept 30 days (extensions §13); a plain delete, harmless when instances run it at once. */
const PRUNE_RUNS = `DELETE FROM sources_run WHERE started_at < now() - interval '30 days' AND finished_at IS NOT NULL`;

/**
 * Runs of sources: their leases (the schedule across instances, manual runs), the source's state a run
 * leaves (validators, failures, next run) and the run log.
 */
@Injectable()
export class SourceRunsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A manual run's lease (LEASE_NOW): the run's id, or why none was taken. */
  async leaseNow(name: string, runID: string, keyID: number | null, leaseSeconds: number): Promise<string | 'busy' | 'absent'> {
    const rows: { id: number; taken: boolean }[] = await this.dataSource.query(LEASE_NOW, LEASE_NOW_PARAMETERS.values({ name, runID, keyID, leaseSeconds }));
    if (rows.length === 0) return 'absent';
    return rows[0].taken ? runID : 'busy';
  }

  /** The lease of one due source for the schedule (LEASE_DUE), or undefined when none is due. */
  async leaseDue(runID: string, leaseSeconds: number): Promise<Lease | undefined> {
    const rows: { id: number }[] = await this.dataSource.query(LEASE_DUE, LEASE_DUE_PARAMETERS.values({ runID, leaseSeconds }));
    if (rows.length === 0) return undefined;
    const [source]: SourceRow[] = await this.dataSource.query(LEASED_SOURCE, BY_ID_PARAMETERS.values({ id: rows[0].id }));
    return { runID, source, trigger: 'schedule', keyID: null };
  }

  async sourceOfLease(runID: string): Promise<Lease | undefined> {
    const rows: (SourceRow & { leaseTrigger: 'schedule' | 'manual'; leaseKeyId: number | null })[] = await this.dataSource.query(
      SOURCE_OF_LEASE,
      BY_RUN_PARAMETERS.values({ runID }),
    );
    if (rows.length === 0) return undefined;
    const { leaseTrigger, leaseKeyId, ...source } = rows[0];
    return { runID, source, trigger: leaseTrigger, keyID: leaseKeyId };
  }

  async renewLease(runID: string, leaseSeconds: number): Promise<void> {
    await this.dataSource.query(RENEW, RENEW_PARAMETERS.values({ runID, leaseSeconds }));
  }

  /**
   * A successful run's validators and digest, and a feed kind's state, as the last statement of its
   * transaction: they move together with its writes. Its lease is renewed from this moment, under the row
   * lock its settlement took, so the commit leaves a live lease whatever the time the writes took (renewals
   * from outside wait for that lock).
   */
  async recordSuccess(manager: EntityManager, sourceId: number, validators: RunValidators | null, leaseSeconds: number): Promise<void> {
    await manager.query(
      RECORD_SUCCESS,
      SUCCESS_PARAMETERS.values({
        sourceId,
        keep: validators !== null,
        etag: validators?.etag ?? null,
        lastModified: validators?.lastModified ?? null,
        bodyDigest: validators?.bodyDigest ?? null,
        leaseSeconds,
        feedState: validators?.feedState ?? null,
      }),
    );
  }

  /**
   * A suspect run's end, as the last statement of its transaction (its additions are written): it clears the
   * validators and the body digest and keeps the feed state of the last success, so the next run fetches
   * without `If-None-Match`/`If-Modified-Since`, is no repeat, and (taxii21, misp) reads again from the old
   * watermark or event timestamps: the claims this run did not end are weighed again, under the settings of
   * then (a raised maxRemovalRatio applies). Neither a success nor a failure: last_success_at and the
   * failure count stay. Its lease is renewed as recordSuccess does.
   */
  async recordSuspect(manager: EntityManager, sourceId: number, leaseSeconds: number): Promise<void> {
    await manager.query(RECORD_SUSPECT, SUSPECT_PARAMETERS.values({ sourceId, leaseSeconds }));
  }

  /**
   * Closes a run: its row, the source's last run and failure count, and its lease. A failed scheduled run
   * moves next_run_at by the back-off: interval × 2^(failures−1), at most 24 h, never sooner than the
   * interval nor than `Retry-After`. A run interrupted by a shutdown is no failure of the source: it is due
   * again at once, for another instance.
   */
  async finish(runID: string, run: FinishedRun, retryAfterSeconds: number | null): Promise<void> {
    const interrupted = run.error?.code === 'Interrupted';
    await this.dataSource.query(
      FINISH,
      FINISH_PARAMETERS.values({
        ...run,
        runID,
        rejections: JSON.stringify(run.rejections),
        error: run.error === null ? null : JSON.stringify(run.error),
        failed: run.outcome === 'failed' && !interrupted,
        retryAfterSeconds,
        interrupted,
      }),
    );
  }

  async runs(sourceId: number, after: { startedAt: string; id: string } | null, limit: number): Promise<(RunRow & { sortAt: string })[]> {
    return this.dataSource.query(RUNS, RUNS_PARAMETERS.values({ sourceId, afterStartedAt: after?.startedAt ?? null, afterId: after?.id ?? null, limit }));
  }

  /** The run log is kept 30 days (extensions §13); a plain delete, harmless when instances run it at once. */
  async pruneRuns(): Promise<void> {
    await this.dataSource.query(PRUNE_RUNS);
  }
}
