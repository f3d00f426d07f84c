import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, QueryFailedError } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { isoUtc } from '../common/sql/timestamps.js';
import { lastSeenOf } from './source-claims.service.js';
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

export interface ClaimRow {
  type: string;
  value: string;
  firstSeenAt: string;
  lastSeenAt: string;
  missedRuns: number;
}

/** A run's lease: its id, the source, and who started it. */
export interface Lease {
  runID: string;
  source: SourceRow;
  trigger: 'schedule' | 'manual';
  keyID: number | null;
}

/** How a run's claims move (extensions §13 "Runs"). */
export interface ClaimSettlement {
  sourceId: number;
  collection: string;
  /** The run's lease: the settlement writes nothing unless the run still holds it; null for a dry run. */
  runID: string | null;
  /**
   * A relation `(key_type, value)` of the keys the body lists (each claimed, its missed runs reset), or null
   * when the body is the previous one (304, or the same normalised objects): then the claims it did not
   * list are missed once more.
   */
  seen: string | null;
  /** The table `(key_type, value)` that receives the keys whose last claim in the collection ended. */
  ended: string;
  snapshot: boolean;
  /** Keys whose claim the run ends itself (a feed kind's revoked or deleted items), not among `seen`. */
  withdrawn: ObjectKey[];
  policy: SourceSettings['removal'];
  maxRemovalRatio: number;
  /** Fewer items than the source's minItems: suspect whatever the removals. */
  tooFew: boolean;
}

/** The settings that weigh a run's removals only (taken from one form to compare two without them). */
const GUARDS = (settings: SourceSettings) => ({ removal: settings.removal, maxRemovalRatio: settings.maxRemovalRatio, minItems: settings.minItems });

const TIME = isoUtc;

const SOURCE_COLUMNS = `s.id, s.name, s.collection, s.kind, s.enabled, s.interval_seconds AS "intervalSeconds", s.settings, s.secrets,
  s.version, ${TIME('s.next_run_at')} AS "nextRunAt", s.lease_run_id AS "leaseRunId", ${TIME('s.last_run_at')} AS "lastRunAt",
  ${TIME('s.last_success_at')} AS "lastSuccessAt", s.consecutive_failures AS "consecutiveFailures", s.etag,
  s.last_modified AS "lastModified", s.body_digest AS "bodyDigest",
  (SELECT count(*)::int FROM sources_claim c WHERE c.source_id = s.id) AS claims`;

const FEED_STATE = `s.feed_state AS "feedState"`;

const RUN_COLUMNS = `r.id AS "runID", r.trigger, ${TIME('r.started_at')} AS "startedAt", ${TIME('r.finished_at')} AS "finishedAt", r.outcome,
  r.http_status AS "httpStatus", r.bytes::float8 AS bytes, r.items, r.added, r.updated, r.withdrawn, r.rejected, r.rejections, r.error`;

function isNameTaken(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; constraint?: string };
  return driverError.code === '23505' && driverError.constraint === 'UQ_sources_source_name';
}

/** Thrown inside a run's transaction when its lease was taken over: nothing of the run is written. */
export class LeaseLost extends Error {
  constructor() {
    super('the run lost its lease to another instance');
  }
}

@Injectable()
export class SourcesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A new source is due at once (next_run_at NULL). The unique index decides a race on the name. */
  async insert(form: SourceForm): Promise<void> {
    try {
      await this.dataSource.query(
        `INSERT INTO sources_source (name, collection, kind, enabled, interval_seconds, settings, secrets) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [form.name, form.collection, form.kind, form.enabled, form.intervalSeconds, form.settings, form.secrets],
      );
    } catch (error) {
      if (isNameTaken(error)) throw SourcesErrors.duplicate(form.name);
      throw error;
    }
  }

  async find(name: string, manager: EntityManager | DataSource = this.dataSource, lock = false): Promise<SourceRow | undefined> {
    // A name no source can have (a path parameter's NUL or 2,000 characters) names none, without asking.
    if (!SOURCE_NAME_PATTERN.test(name)) return undefined;
    const rows: SourceRow[] = await manager.query(`SELECT ${SOURCE_COLUMNS} FROM sources_source s WHERE s.name = $1${lock ? ' FOR UPDATE' : ''}`, [name]);
    return rows[0];
  }

  /**
   * A source's id and collection, without counting its claims (`find` does, for views): what the access
   * rule, the run log and the claims pages need, read on every poll of a run's progress.
   */
  async locate(name: string): Promise<{ id: number; collection: string } | undefined> {
    if (!SOURCE_NAME_PATTERN.test(name)) return undefined;
    const rows: { id: number; collection: string }[] = await this.dataSource.query(`SELECT id, collection FROM sources_source WHERE name = $1`, [name]);
    return rows[0];
  }

  /** Sources in creation order after `afterId`, only of `collections` unless null (every one). */
  async list(afterId: number, limit: number, collections: string[] | null): Promise<SourceRow[]> {
    return this.dataSource.query(
      `SELECT ${SOURCE_COLUMNS} FROM sources_source s WHERE s.id > $1 AND ($3::text[] IS NULL OR s.collection = ANY($3::text[])) ORDER BY s.id LIMIT $2`,
      [afterId, limit, collections],
    );
  }

  /**
   * Writes the form; the version moves only with a real change. Re-enabling makes the source due at once
   * (extensions §13); an interval change takes effect from the next scheduled run.
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
    // weigh a run's removals; they keep them.
    const reread =
      form.kind !== before.kind || !isDeepStrictEqual({ ...form.settings, ...GUARDS(form.settings) }, { ...before.settings, ...GUARDS(form.settings) });
    await manager.query(
      `UPDATE sources_source SET kind = $2, enabled = $3, interval_seconds = $4, settings = $5, secrets = $6, version = version + 1,
              next_run_at = CASE WHEN $3 AND NOT enabled THEN NULL ELSE next_run_at END,
              consecutive_failures = CASE WHEN $3 AND NOT enabled THEN 0 ELSE consecutive_failures END,
              etag = CASE WHEN $7 THEN NULL ELSE etag END, last_modified = CASE WHEN $7 THEN NULL ELSE last_modified END,
              body_digest = CASE WHEN $7 THEN NULL ELSE body_digest END, feed_state = CASE WHEN $7 THEN NULL ELSE feed_state END
        WHERE id = $1`,
      [before.id, form.kind, form.enabled, form.intervalSeconds, form.settings, form.secrets, reread],
    );
  }

  /** Deletes the source (its runs and claims go with it); the keys whose last claim it held go into the table `ended`. */
  async delete(manager: EntityManager, source: SourceRow, ended: string): Promise<void> {
    await manager.query(
      `WITH gone AS (DELETE FROM sources_claim WHERE source_id = $1 RETURNING key_type, value)
       INSERT INTO ${ended} (key_type, value) SELECT g.key_type, g.value FROM gone g WHERE NOT ${CLAIMED_ELSEWHERE('g')}`,
      [source.id, source.collection],
    );
    await manager.query(`DELETE FROM sources_source WHERE id = $1`, [source.id]);
  }

  /**
   * A manual run's lease and its run row, in one statement: only when no run holds a live lease (a
   * concurrent claim waits for the row and re-checks the lease on its new version, so one of two wins).
   * A lease left to expire by a killed instance is taken over; its run is closed as failed.
   */
  async leaseNow(name: string, runID: string, keyID: number | null, leaseSeconds: number): Promise<string | 'busy' | 'absent'> {
    const rows: { id: number; taken: boolean }[] = await this.dataSource.query(
      `WITH s AS (SELECT id, lease_run_id AS abandoned FROM sources_source WHERE name = $1),
       taken AS (
         UPDATE sources_source t SET lease_run_id = $2, lease_until = now() + make_interval(secs => $4), lease_trigger = 'manual', lease_key_id = $3
           FROM s WHERE t.id = s.id AND (t.lease_until IS NULL OR t.lease_until < now())
         RETURNING t.id, s.abandoned
       ),
       closed AS (${CLOSE_ABANDONED}),
       run AS (INSERT INTO sources_run (id, source_id, trigger) SELECT $2, id, 'manual' FROM taken)
       SELECT s.id, EXISTS (SELECT 1 FROM taken) AS taken FROM s`,
      [name, runID, keyID, leaseSeconds],
    );
    if (rows.length === 0) return 'absent';
    return rows[0].taken ? runID : 'busy';
  }

  /**
   * The lease of one due source, for the schedule: enabled, no live lease, and due (or holding an expired
   * lease: a run a killed instance left, taken over). FOR UPDATE SKIP LOCKED makes concurrent instances
   * take different rows; a row another claimer committed meanwhile is re-checked on its new version (its
   * lease is then live) and skipped, so each due time gives exactly one run. A due run moves next_run_at
   * by the interval at once; a failure moves it again (back-off).
   */
  async leaseDue(runID: string, leaseSeconds: number): Promise<Lease | undefined> {
    const rows: { id: number }[] = await this.dataSource.query(
      `WITH due AS (
         SELECT id, lease_run_id AS abandoned FROM sources_source
          WHERE enabled AND (lease_until IS NULL OR lease_until < now())
            AND (next_run_at IS NULL OR next_run_at <= now() OR lease_run_id IS NOT NULL)
          ORDER BY next_run_at NULLS FIRST, id LIMIT 1 FOR UPDATE SKIP LOCKED
       ),
       taken AS (
         UPDATE sources_source t SET lease_run_id = $1, lease_until = now() + make_interval(secs => $2), lease_trigger = 'schedule', lease_key_id = NULL,
                next_run_at = CASE WHEN t.next_run_at IS NULL OR t.next_run_at <= now() THEN now() + make_interval(secs => t.interval_seconds) ELSE t.next_run_at END
           FROM due WHERE t.id = due.id
         RETURNING t.id, due.abandoned
       ),
       closed AS (${CLOSE_ABANDONED}),
       run AS (INSERT INTO sources_run (id, source_id, trigger) SELECT $1, id, 'schedule' FROM taken)
       SELECT id FROM taken`,
      [runID, leaseSeconds],
    );
    if (rows.length === 0) return undefined;
    const [source]: SourceRow[] = await this.dataSource.query(`SELECT ${SOURCE_COLUMNS}, ${FEED_STATE} FROM sources_source s WHERE s.id = $1`, [rows[0].id]);
    return { runID, source, trigger: 'schedule', keyID: null };
  }

  async sourceOfLease(runID: string): Promise<Lease | undefined> {
    const rows: (SourceRow & { leaseTrigger: 'schedule' | 'manual'; leaseKeyId: number | null })[] = await this.dataSource.query(
      `SELECT ${SOURCE_COLUMNS}, ${FEED_STATE}, s.lease_trigger AS "leaseTrigger", s.lease_key_id AS "leaseKeyId" FROM sources_source s WHERE s.lease_run_id = $1`,
      [runID],
    );
    if (rows.length === 0) return undefined;
    const { leaseTrigger, leaseKeyId, ...source } = rows[0];
    return { runID, source, trigger: leaseTrigger, keyID: leaseKeyId };
  }

  async renewLease(runID: string, leaseSeconds: number): Promise<void> {
    await this.dataSource.query(`UPDATE sources_source SET lease_until = now() + make_interval(secs => $2) WHERE lease_run_id = $1`, [runID, leaseSeconds]);
  }

  /**
   * The claims of a run, inside its write's transaction, set-based over the staged body (BatchService's
   * RunStage): under the collection's exclusive writer lock, so runs of sources of one collection settle one
   * after the other and each sees the claims the other ended, and under the source row's lock, which its
   * deletion takes too. Native writes touch no claim row (theirs is a column of the object, read under the
   * same collection lock when withdrawals are decided). Fills `ended` with the keys whose last claim in the
   * collection ended, and says whether the run is suspect.
   */
  async settle(manager: EntityManager, run: ClaimSettlement): Promise<{ suspect: boolean }> {
    if (run.runID !== null) {
      const held: unknown[] = await manager.query(`SELECT 1 FROM sources_source WHERE id = $1 AND lease_run_id = $2 FOR UPDATE`, [run.sourceId, run.runID]);
      if (held.length === 0) throw new LeaseLost();
    }
    if (run.seen !== null) {
      // The body's keys once, for the upsert and, in a snapshot, the claims it misses.
      await manager.query(`CREATE TEMP TABLE ${RUN_SEEN} ON COMMIT DROP AS SELECT s.key_type, s.value FROM ${run.seen} s`);
      await manager.query(`ANALYZE ${RUN_SEEN}`);
      // A snapshot rewrites only the claims whose state changes (new, or listed again after a miss): a claim
      // listed run after run keeps its row, and its lastSeenAt is the source's last success (lastSeenOf). A
      // delta body lists few keys, each seen now.
      await manager.query(
        `INSERT INTO sources_claim (source_id, key_type, value, first_seen_at, last_seen_at, missed_runs)
         SELECT $1::int, s.key_type, s.value, now(), now(), 0 FROM ${RUN_SEEN} s
         ON CONFLICT (source_id, key_type, value) DO UPDATE SET last_seen_at = now(), missed_runs = 0
         ${run.snapshot ? 'WHERE sources_claim.missed_runs > 0' : ''}`,
        [run.sourceId],
      );
    }
    if (!run.snapshot) return this.withdraw(manager, run);
    // Missed by this run: not listed by its body (an anti-join with the keys it lists), or, for a repeat of
    // the previous body, already missed by it. Held in a table of their own: usually few, read three times.
    await manager.query(
      `CREATE TEMP TABLE ${RUN_MISSED} ON COMMIT DROP AS SELECT c.key_type, c.value FROM sources_claim c
       WHERE c.source_id = $1 AND ${run.seen !== null ? `NOT EXISTS (SELECT 1 FROM ${RUN_SEEN} s WHERE s.key_type = c.key_type AND s.value = c.value)` : 'c.missed_runs > 0'}`,
      [run.sourceId],
    );
    const ends =
      run.policy.policy === 'remove' ? 'true' : run.policy.policy === 'never' ? 'false' : `c.missed_runs + 1 >= ${Number(run.policy.runs)}`;
    // The ratio is of the claims held before this run: those its upsert just made (first seen at this
    // transaction's now()) do not count, or a body of all new values would dilute its own removals.
    const [{ total, ending }]: { total: number; ending: number }[] = await manager.query(
      `SELECT (SELECT count(*) FROM sources_claim c WHERE c.source_id = $1 AND c.${HELD_BEFORE})::int AS total,
              (SELECT count(*) FROM sources_claim c JOIN ${RUN_MISSED} m USING (key_type, value) WHERE c.source_id = $1 AND ${ends})::int AS ending`,
      [run.sourceId],
    );
    const suspect = run.tooFew || ending > run.maxRemovalRatio * total;
    if (suspect) return { suspect };
    // A claim missed for the first time was last listed by the source's last successful run (its row was not
    // rewritten since): that time becomes its own.
    await manager.query(
      `UPDATE sources_claim c SET missed_runs = c.missed_runs + 1,
              last_seen_at = CASE WHEN c.missed_runs = 0 THEN GREATEST(c.last_seen_at, s.last_success_at) ELSE c.last_seen_at END
       FROM sources_source s, ${RUN_MISSED} m WHERE s.id = c.source_id AND c.source_id = $1 AND c.key_type = m.key_type AND c.value = m.value`,
      [run.sourceId],
    );
    await manager.query(
      `WITH gone AS (DELETE FROM sources_claim c WHERE c.source_id = $1 AND c.missed_runs > 0 AND ${ends.replace('c.missed_runs + 1', 'c.missed_runs')} RETURNING c.key_type, c.value)
       INSERT INTO ${run.ended} (key_type, value) SELECT g.key_type, g.value FROM gone g WHERE NOT ${CLAIMED_ELSEWHERE('g')}`,
      [run.sourceId, run.collection],
    );
    return { suspect };
  }

  /**
   * A delta run's own withdrawals (a feed kind's revoked or deleted items): its claims of those keys end,
   * unless that is more than maxRemovalRatio of its claims (suspect: none ends), and the keys whose last
   * claim in the collection ended go to `run.ended`. Under the same locks as `settle`, so the count and the
   * deletion see the same claims.
   */
  private async withdraw(manager: EntityManager, run: ClaimSettlement): Promise<{ suspect: boolean }> {
    if (run.tooFew || run.withdrawn.length === 0) return { suspect: run.tooFew };
    const keys = [run.sourceId, run.withdrawn.map((key) => key.type), run.withdrawn.map((key) => key.value)];
    const listed = `(key_type, value) IN (SELECT * FROM unnest($2::text[], $3::text[]))`;
    const [{ total, ending }]: { total: number; ending: number }[] = await manager.query(
      `SELECT count(*) FILTER (WHERE ${HELD_BEFORE})::int AS total, count(*) FILTER (WHERE ${listed})::int AS ending FROM sources_claim WHERE source_id = $1`,
      keys,
    );
    if (ending > run.maxRemovalRatio * total) return { suspect: true };
    await manager.query(
      `WITH gone AS (DELETE FROM sources_claim WHERE source_id = $1 AND ${listed} RETURNING key_type, value)
       INSERT INTO ${run.ended} (key_type, value) SELECT g.key_type, g.value FROM gone g WHERE NOT ${CLAIMED_ELSEWHERE('g', '$4')}`,
      [...keys, run.collection],
    );
    return { suspect: false };
  }

  /**
   * A successful run's validators and digest, and a feed kind's state, as the last statement of its
   * transaction: they move together with its writes. Its lease is renewed from this moment, under the row
   * lock its settlement took, so the commit leaves a live lease whatever the time the writes took (renewals
   * from outside wait for that lock).
   */
  async recordSuccess(
    manager: EntityManager,
    sourceId: number,
    validators: { etag: string | null; lastModified: string | null; bodyDigest: string | null; feedState?: FeedState } | null,
    leaseSeconds: number,
  ): Promise<void> {
    await manager.query(
      `UPDATE sources_source SET last_success_at = now(), consecutive_failures = 0,
              etag = CASE WHEN $2 THEN $3 ELSE etag END, last_modified = CASE WHEN $2 THEN $4 ELSE last_modified END,
              body_digest = CASE WHEN $2 THEN $5 ELSE body_digest END, feed_state = COALESCE($7, feed_state),
              lease_until = CASE WHEN lease_run_id IS NOT NULL THEN clock_timestamp() + make_interval(secs => $6) END
        WHERE id = $1`,
      [sourceId, validators !== null, validators?.etag ?? null, validators?.lastModified ?? null, validators?.bodyDigest ?? null, leaseSeconds, validators?.feedState ?? null],
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
    await manager.query(
      `UPDATE sources_source SET etag = NULL, last_modified = NULL, body_digest = NULL,
              lease_until = CASE WHEN lease_run_id IS NOT NULL THEN clock_timestamp() + make_interval(secs => $2) END
        WHERE id = $1`,
      [sourceId, leaseSeconds],
    );
  }

  /**
   * Closes a run: its row, the source's last run and failure count, and its lease. A failed scheduled run
   * moves next_run_at by the back-off: interval × 2^(failures−1), at most 24 h, never sooner than the
   * interval nor than `Retry-After`. A run interrupted by a shutdown is no failure of the source: it is due
   * again at once, for another instance.
   */
  async finish(runID: string, run: Omit<RunRow, 'runID' | 'trigger' | 'startedAt' | 'finishedAt'>, retryAfterSeconds: number | null): Promise<void> {
    const interrupted = run.error?.code === 'Interrupted';
    const failed = run.outcome === 'failed' && !interrupted;
    await this.dataSource.query(
      `WITH r AS (
         UPDATE sources_run SET finished_at = clock_timestamp(), outcome = $2, http_status = $3, bytes = $4, items = $5, added = $6, updated = $7,
                withdrawn = $8, rejected = $9, rejections = $10, error = $11
          WHERE id = $1 RETURNING source_id
       )
       UPDATE sources_source s SET last_run_at = now(), lease_run_id = NULL, lease_until = NULL, lease_trigger = NULL, lease_key_id = NULL,
              consecutive_failures = CASE WHEN $12 THEN s.consecutive_failures + 1 ELSE s.consecutive_failures END,
              next_run_at = CASE WHEN $12 AND s.lease_trigger = 'schedule'
                THEN now() + make_interval(secs => GREATEST(
                       LEAST(86400, s.interval_seconds * power(2, LEAST(s.consecutive_failures, 20))), s.interval_seconds, COALESCE($13, 0)))
                WHEN $14 AND s.lease_trigger = 'schedule' THEN now() ELSE s.next_run_at END
         FROM r WHERE s.id = r.source_id AND s.lease_run_id = $1`,
      [
        runID,
        run.outcome,
        run.httpStatus,
        run.bytes,
        run.items,
        run.added,
        run.updated,
        run.withdrawn,
        run.rejected,
        JSON.stringify(run.rejections),
        run.error === null ? null : JSON.stringify(run.error),
        failed,
        retryAfterSeconds,
        interrupted,
      ],
    );
  }

  async runs(sourceId: number, after: { startedAt: string; id: string } | null, limit: number): Promise<(RunRow & { sortAt: string })[]> {
    return this.dataSource.query(
      `SELECT ${RUN_COLUMNS}, r.started_at::text AS "sortAt" FROM sources_run r
        WHERE r.source_id = $1 AND ($2::timestamptz IS NULL OR (r.started_at, r.id) < ($2::timestamptz, $3::uuid))
        ORDER BY r.started_at DESC, r.id DESC LIMIT $4`,
      [sourceId, after?.startedAt ?? null, after?.id ?? null, limit],
    );
  }

  async claims(sourceId: number, after: { type: string; value: string } | null, limit: number): Promise<ClaimRow[]> {
    return this.dataSource.query(
      `SELECT c.key_type AS type, c.value, ${TIME('c.first_seen_at')} AS "firstSeenAt", ${TIME(lastSeenOf('c', 's'))} AS "lastSeenAt", c.missed_runs AS "missedRuns"
         FROM sources_claim c JOIN sources_source s ON s.id = c.source_id
        WHERE c.source_id = $1 AND ($2::text IS NULL OR (c.key_type, c.value) > ($2::text, $3::text))
        ORDER BY c.key_type, c.value LIMIT $4`,
      [sourceId, after?.type ?? null, after?.value ?? null, limit],
    );
  }

  /** Per source, for the metrics: its last success (epoch seconds, null: never) and its claims. */
  async gauges(): Promise<{ name: string; lastSuccess: number | null; claims: number }[]> {
    return this.dataSource.query(
      `SELECT s.name, extract(epoch FROM s.last_success_at)::float8 AS "lastSuccess",
              (SELECT count(*)::int FROM sources_claim c WHERE c.source_id = s.id) AS claims
         FROM sources_source s ORDER BY s.id`,
    );
  }

  /** The run log is kept 30 days (extensions §13); a plain delete, harmless when instances run it at once. */
  async pruneRuns(): Promise<void> {
    await this.dataSource.query(`DELETE FROM sources_run WHERE started_at < now() - interval '30 days' AND finished_at IS NOT NULL`);
  }
}

/**
 * A claim held before the run settling now: not first seen by it. A run's transaction started after the
 * previous run of its source committed (one lease at a time), so its now() is later than every older claim's.
 */
const HELD_BEFORE = `first_seen_at < now()`;

/** A snapshot run's temporary tables (of its transaction): the keys its body lists, and the claims it misses. */
const RUN_SEEN = 'source_run_seen';
const RUN_MISSED = 'source_run_missed';

/** Whether another source of the collection (`collection`, $2 by default) still claims the key of row `g` (a source other than $1). */
const CLAIMED_ELSEWHERE = (g: string, collection = '$2') => `EXISTS (
  SELECT 1 FROM sources_claim o JOIN sources_source os ON os.id = o.source_id
   WHERE o.key_type = ${g}.key_type AND o.value = ${g}.value AND o.source_id <> $1 AND os.collection = ${collection})`;

/** Closes the run of a lease taken over (`taken.abandoned`): failed, nothing of it was written. */
const CLOSE_ABANDONED = `UPDATE sources_run SET finished_at = clock_timestamp(), outcome = 'failed',
    error = '{"code":"LeaseExpired","message":"the instance running it stopped renewing its lease; another instance took the run over"}'
   FROM taken WHERE sources_run.id = taken.abandoned AND sources_run.finished_at IS NULL`;
