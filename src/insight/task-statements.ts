/**
 * The task queue's statements, as text with their parameters by name (`namedParameters`), in a module that
 * imports nothing but SQL fragments and the named-parameters helper (no framework): the bench (row 6 and
 * the stack floor, bench/rows/service-statements.ts) loads them from the service build, so its raw `pg`
 * baselines run exactly these statements and cannot drift from them.
 *
 * Every lease decision reads the database clock (`now()`, one value per statement), so all instances agree.
 */
import { namedParameters } from '../common/sql/named-parameters.js';
import { attemptLimitSql, endedWithLeaseSql } from './ended-lease.js';

const DELIVERY_LIMIT_EXCEEDED = 'DeliveryLimitExceeded';

/** The message of DeliveryLimitExceeded, `attempts` the task's attempt limit (a number, or SQL giving one). */
const deliveryLimitMessage = (attempts: string) => `no executor reported a result within the lease on any of ${attempts} deliveries`;

/**
 * The error a task gets once it has been delivered `maxAttempts` times without a report (decisions §9):
 * its own limit (attemptLimit in ended-lease.ts), which TAKE writes with the same text (deliveryLimitErrorSql).
 */
export function deliveryLimitError(maxAttempts: number): { code: string; message: string } {
  return { code: DELIVERY_LIMIT_EXCEEDED, message: deliveryLimitMessage(String(maxAttempts)) };
}

/** deliveryLimitError of a task row, as SQL: its code and message (the row's own attempt limit in it). */
function deliveryLimitErrorSql(maxDeliveries: string): { code: string; message: string } {
  return {
    code: `'${DELIVERY_LIMIT_EXCEEDED}'`,
    message: `format('${deliveryLimitMessage('%s')}', ${attemptLimitSql(maxDeliveries)})`,
  };
}

/** The error of a task cancelled while leased whose lease ran out without a report. */
export const CANCELLED_UNREPORTED = { code: 'Cancelled', message: 'cancelled; the lease ran out without a report' } as const;

/**
 * A report (completion, failure or heartbeat) is accepted for a pending task with a current attempt (a
 * lease, running or run out): a late report after an expired lease still counts unless that lease was the
 * last allowed one or the task was cancelled meanwhile, which makes the task Failed (decisions §9, §16).
 * `maxDeliveries` is the placeholder of TASK_MAX_DELIVERIES.
 */
export const openForReport = (maxDeliveries: string) =>
  `state = 'Pending' AND lease_expires_at IS NOT NULL AND (lease_expires_at > now() OR (deliveries < ${attemptLimitSql(maxDeliveries)} AND NOT cancel_requested))`;

/**
 * Fencing (§16), `token` the SHA-256 of a lease token (bytea, null without one) and `key` the reporting key:
 * with a token, only the current attempt's; without one (the SDK), unless another key holds a live lease
 * (an attempt taken by an unknown key, as raw baselines take, counts as the reporter's own).
 */
export function fenced(token: string, key: string): string {
  return `CASE WHEN ${token}::bytea IS NULL
               THEN lease_expires_at <= now() OR attempt_key_id IS NULL OR attempt_key_id = ${key}::int
               ELSE lease_token_hash = ${token}::bytea END`;
}

/** The current attempt as an entry of `attempt_log` (columns of the row before the update). */
function loggedAttempt(outcome: string, endedAt: string, error: string, report: string): string {
  return `jsonb_build_object('attempt', t.deliveries, 'executor', t.attempt_executor, 'keyID', t.attempt_key_id,
            'takenAt', t.attempt_taken_at, 'endedAt', ${endedAt}, 'outcome', ${outcome}, 'error', ${error},
            'tokenHash', encode(t.lease_token_hash, 'hex'), 'report', encode(${report}, 'hex'))`;
}

/** The start of the current UTC window of a quota (`minute`, `hour`, `day`). */
export const windowStart = (unit: string) => `date_trunc('${unit}', now(), 'UTC')`;

/** What a quota's window has handed out in the current window (a count of an earlier window is stale). */
export const usedIn = (q: string, unit: string) => `CASE WHEN ${q}.${unit}_start = ${windowStart(unit)} THEN ${q}.${unit}_used ELSE 0 END`;

/**
 * TAKE's parameters: up to `limit` tasks leased for `leaseSeconds`, TASK_MAX_DELIVERIES `maxDeliveries`;
 * `schemas` (null: any), `executor` and `keyId` name the taker.
 */
const TAKE_PARAMETERS = namedParameters(['limit', 'maxDeliveries', 'leaseSeconds', 'schemas', 'executor', 'keyId']);
const take = TAKE_PARAMETERS.$;
/** TAKE's failure of a task past its last lease (DeliveryLimitExceeded with the task's own attempt limit). */
const exhausted = deliveryLimitErrorSql(take.maxDeliveries);

// One statement, so taking is atomic without an explicit transaction:
// 1. tasks whose last allowed lease ran out, or that were cancelled while leased and whose lease ran out,
//    become Failed (DeliveryLimitExceeded or Cancelled); no timer needed;
// 2. quotas (`locked`): the quota rows of the schemas this take may serve are locked, skipping those
//    another take holds right now (their tasks wait for a later take). A locked row is the latest version;
//    when it differs from the one this statement's snapshot saw (`handouts` moved), a take committed since
//    the snapshot and its leases are invisible here, so that schema hands out nothing this time. Otherwise
//    every hand-out of the schema is visible or waits behind this lock, so `remaining` (the least of each
//    window's limit minus its use, and of maxLeased minus the live leases) is exact across instances;
// 3. up to `limit` takeable tasks (waiting and past any back-off, or with a lease run out and attempts left;
//    of `schemas` when given; none of a paused schema or of a quota with nothing left), by priority then
//    age, are locked, skipping rows other executors hold right now; of each quota'd schema only its first
//    `remaining` are kept (`picked`), and its windows count them (`counted`);
// 4. each gets a new attempt: a lease of `leaseSeconds` and a fresh token (244 random bits from two v4
//    UUIDs, returned once, stored as its SHA-256), taken by `keyId` and `executor`; an attempt whose lease had
//    run out moves to the log as `leaseExpired`. Conditions 1 and 3 are disjoint, so no row is touched twice.
// The rows failed in step 1 come back too (without params), for their announcements.
const TAKE = `
  WITH exhausted AS (
    UPDATE insight_task
       SET state = 'Failed',
           error_code = CASE WHEN cancel_requested THEN '${CANCELLED_UNREPORTED.code}' ELSE ${exhausted.code} END,
           error_message = CASE WHEN cancel_requested THEN '${CANCELLED_UNREPORTED.message}' ELSE ${exhausted.message} END
     WHERE id IN (SELECT id FROM insight_task
                   WHERE ${endedWithLeaseSql(take.maxDeliveries)}
                   FOR UPDATE SKIP LOCKED)
    RETURNING id, error_code, error_message
  ), locked AS (
    SELECT * FROM insight_quota WHERE ${take.schemas}::text[] IS NULL OR schema_id = ANY (${take.schemas}::text[])
       FOR UPDATE SKIP LOCKED
  ), quota AS (
    SELECT l.schema_id,
           CASE WHEN l.handouts <> seen.handouts THEN 0
                ELSE LEAST(COALESCE(l.per_minute - ${usedIn('l', 'minute')}, ${take.limit}), COALESCE(l.per_hour - ${usedIn('l', 'hour')}, ${take.limit}),
                           COALESCE(l.per_day - ${usedIn('l', 'day')}, ${take.limit}),
                           COALESCE(l.max_leased - (SELECT count(*) FROM insight_task leased
                                                     WHERE leased.schema_id = l.schema_id AND leased.state = 'Pending'
                                                       AND leased.lease_expires_at > now())::int, ${take.limit})) END AS remaining
      FROM locked l JOIN insight_quota seen ON seen.schema_id = l.schema_id
  ), candidates AS (
    SELECT id, schema_id, priority, created_at, uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) AS token
      FROM insight_task
     WHERE state = 'Pending'
       AND (lease_expires_at IS NULL AND (available_at IS NULL OR available_at <= now())
            OR lease_expires_at <= now() AND deliveries < ${attemptLimitSql(take.maxDeliveries)} AND NOT cancel_requested)
       AND (${take.schemas}::text[] IS NULL OR schema_id = ANY (${take.schemas}::text[]))
       -- Paused schemas, and quota'd ones with nothing left for this take: each set hashed once, not probed per row.
       AND schema_id NOT IN (SELECT schema_id FROM insight_schema_pause WHERE until > now())
       AND schema_id NOT IN (SELECT schema_id FROM insight_quota EXCEPT SELECT schema_id FROM quota WHERE remaining > 0)
     ORDER BY priority, created_at, id
     LIMIT ${take.limit}
     FOR UPDATE SKIP LOCKED
  ), picked AS (
    SELECT c.id, c.schema_id, c.token
      FROM (SELECT *, row_number() OVER (PARTITION BY schema_id ORDER BY priority, created_at, id) AS n FROM candidates) c
      LEFT JOIN quota q ON q.schema_id = c.schema_id
     WHERE q.schema_id IS NULL OR c.n <= q.remaining
  ), counted AS (
    UPDATE insight_quota u
       SET handouts = u.handouts + p.n,
           minute_used = ${usedIn('u', 'minute')} + p.n, minute_start = ${windowStart('minute')},
           hour_used = ${usedIn('u', 'hour')} + p.n, hour_start = ${windowStart('hour')},
           day_used = ${usedIn('u', 'day')} + p.n, day_start = ${windowStart('day')}
      FROM (SELECT schema_id, count(*)::int AS n FROM picked GROUP BY schema_id) p
     WHERE u.schema_id = p.schema_id
  ), taken AS (
    UPDATE insight_task t
       SET deliveries = t.deliveries + 1, lease_expires_at = now() + make_interval(secs => ${take.leaseSeconds}),
           attempt_log = CASE WHEN t.lease_expires_at IS NULL THEN t.attempt_log
                              ELSE t.attempt_log || ${loggedAttempt(`'leaseExpired'`, 't.lease_expires_at', 'NULL', 'NULL::bytea')} END,
           lease_token_hash = sha256(picked.token), attempt_key_id = ${take.keyId}, attempt_executor = ${take.executor}, attempt_taken_at = now(),
           attempt_ended_at = NULL, attempt_outcome = NULL, attempt_error = NULL, report_digest = NULL, progress = NULL
      FROM picked
     WHERE t.id = picked.id
    RETURNING t.id, t.created_at, t.priority, t.schema_id, t.object_keys, t.file_id, t.deliveries, t.lease_expires_at, picked.token
  )
  SELECT false AS exhausted, id, created_at AS "createdAt", priority, schema_id AS "schemaId", object_keys AS "objectKeys",
         file_id AS "fileId", deliveries AS attempt, lease_expires_at AS "leaseExpiresAt", encode(token, 'hex') AS "leaseToken",
         NULL AS "errorCode", NULL AS "errorMessage"
    FROM taken
  UNION ALL
  SELECT true, id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, error_code, error_message FROM exhausted
   ORDER BY priority, "createdAt", id`;

/**
 * A completion: `id` the task, `maxDeliveries` the delivery limit, `result` (JSON), `tokenHash` the token's
 * SHA-256 (or null), `keyId` the reporting key (or null), `digest` the report's (or null). A result completes
 * a task even when it was cancelled meanwhile (§16).
 */
const COMPLETE_PARAMETERS = namedParameters(['id', 'maxDeliveries', 'result', 'tokenHash', 'keyId', 'digest']);
const complete = COMPLETE_PARAMETERS.$;
const COMPLETE = `
  UPDATE insight_task
     SET state = 'Completed', result = ${complete.result}, attempt_ended_at = now(), attempt_outcome = 'completed', report_digest = ${complete.digest}
   WHERE id = ${complete.id} AND ${openForReport(complete.maxDeliveries)} AND ${fenced(complete.tokenHash, complete.keyId)}`;

/**
 * A failure of `kind` (`permanent`, `transient`, `rateLimited`): `id` the task, `maxDeliveries` the delivery
 * limit, `code`/`message` the executor's, `tokenHash` the token's SHA-256 (or null), `keyId` the reporting
 * key, `digest` the report's, `shown` the error as the attempt shows it (JSON), `retryBaseSeconds`/
 * `retryMaxSeconds` TASK_RETRY_BASE/MAX_SECONDS, `jitter` the back-off's random factor, `retryAfterSeconds`.
 */
const FAIL_PARAMETERS = namedParameters([
  'id',
  'maxDeliveries',
  'code',
  'message',
  'tokenHash',
  'keyId',
  'digest',
  'shown',
  'kind',
  'retryBaseSeconds',
  'retryMaxSeconds',
  'jitter',
  'retryAfterSeconds',
]);
const fail = FAIL_PARAMETERS.$;

/**
 * How a failure ends (`ending`, decided on the row locked by `target`, hence on its latest version):
 * - `cancelled` (cancel requested, any kind), `permanent`, `exhausted` (transient on the last attempt):
 *   the task is Failed and the attempt stays current, with its report's digest and its error (the task
 *   view shows an exhausted task's as `error.lastError`);
 * - `transient`: back to the queue after min(max, base × 2^(attempt−1)) × jitter, the attempt used;
 * - `rateLimited`: back to the queue after `retryAfterSeconds`, the attempt not used, and the schema paused
 *   as long (a later pause never shortens an earlier one).
 * Both requeues move the attempt into the log (with its token's hash and the report's digest, so a replay
 * is still recognised) and leave the task without a lease.
 */
const FAIL = `
  WITH target AS (
    SELECT id, schema_id,
           CASE WHEN cancel_requested THEN 'cancelled'
                WHEN ${fail.kind} = 'transient' AND deliveries >= ${attemptLimitSql(fail.maxDeliveries)} THEN 'exhausted'
                ELSE ${fail.kind} END AS ending
      FROM insight_task
     WHERE id = ${fail.id} AND ${openForReport(fail.maxDeliveries)} AND ${fenced(fail.tokenHash, fail.keyId)}
       FOR UPDATE
  ), paused AS (
    INSERT INTO insight_schema_pause (schema_id, until)
    SELECT schema_id, now() + make_interval(secs => ${fail.retryAfterSeconds}) FROM target WHERE ending = 'rateLimited'
    ON CONFLICT (schema_id) DO UPDATE SET until = GREATEST(insight_schema_pause.until, EXCLUDED.until)
  )
  UPDATE insight_task t
     SET state = CASE WHEN ending IN ('transient', 'rateLimited') THEN 'Pending' ELSE 'Failed' END,
         error_code = CASE ending WHEN 'cancelled' THEN 'Cancelled' WHEN 'exhausted' THEN 'AttemptsExhausted'
                                  WHEN 'permanent' THEN ${fail.code} END,
         error_message = CASE ending WHEN 'cancelled' THEN 'cancelled; the executor reported ' || ${fail.code} || ': ' || ${fail.message}
                                     WHEN 'exhausted' THEN 'attempt ' || t.deliveries || ' of ' || t.deliveries || ' failed transiently; its error is lastError'
                                     WHEN 'permanent' THEN ${fail.message} END,
         deliveries = CASE WHEN ending = 'rateLimited' THEN t.deliveries - 1 ELSE t.deliveries END,
         available_at = CASE ending
                          WHEN 'transient' THEN now() + make_interval(secs => LEAST(${fail.retryMaxSeconds}::float8, ${fail.retryBaseSeconds}::float8 * 2 ^ (t.deliveries - 1)) * ${fail.jitter}::float8)
                          WHEN 'rateLimited' THEN now() + make_interval(secs => ${fail.retryAfterSeconds})
                          ELSE t.available_at END,
         attempt_log = CASE WHEN ending IN ('transient', 'rateLimited')
                            THEN t.attempt_log || ${loggedAttempt('ending', 'now()', `${fail.shown}::jsonb`, `${fail.digest}::bytea`)}
                            ELSE t.attempt_log END,
         lease_expires_at = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.lease_expires_at END,
         lease_token_hash = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.lease_token_hash END,
         attempt_key_id = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.attempt_key_id END,
         attempt_executor = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.attempt_executor END,
         attempt_taken_at = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.attempt_taken_at END,
         attempt_ended_at = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE now() END,
         attempt_outcome = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL
                                WHEN ending = 'exhausted' THEN 'transient' ELSE ending END,
         attempt_error = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE ${fail.shown}::jsonb END,
         report_digest = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE ${fail.digest}::bytea END,
         progress = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.progress END
    FROM target
   WHERE t.id = target.id
  RETURNING t.id, t.state, t.error_code AS "errorCode", t.error_message AS "errorMessage", t.available_at AS "availableAt"`;

/**
 * A heartbeat: `id` the task, `maxDeliveries` the delivery limit, `tokenHash` the token's SHA-256,
 * `extendSeconds`, `maxLeaseSeconds` TASK_MAX_LEASE_SECONDS, `progress` (JSON or null). The lease runs
 * `extendSeconds` from now, capped at the attempt's take + `maxLeaseSeconds`. The row is written only when
 * that moves the lease and less than half of `extendSeconds` is left (or the lease ran out: the current
 * token revives it), or when the heartbeat carries progress; any other heartbeat reads the row and writes
 * nothing, so thousands of leased tasks heartbeating often cost about one row update per half lease each.
 * `current` is the row as the statement's snapshot saw it (absent: no such task), `updated` the new lease
 * when written.
 */
const HEARTBEAT_PARAMETERS = namedParameters(['id', 'maxDeliveries', 'tokenHash', 'extendSeconds', 'maxLeaseSeconds', 'progress']);
const beat = HEARTBEAT_PARAMETERS.$;
const NEW_LEASE = `LEAST(now() + make_interval(secs => ${beat.extendSeconds}), attempt_taken_at + make_interval(secs => ${beat.maxLeaseSeconds}))`;
const HEARTBEAT = `
  WITH current AS (
    SELECT id, lease_expires_at, cancel_requested, (${openForReport(beat.maxDeliveries)}) AS open, lease_token_hash = ${beat.tokenHash} AS own
      FROM insight_task WHERE id = ${beat.id}
  ), updated AS (
    UPDATE insight_task
       SET lease_expires_at = ${NEW_LEASE}, progress = COALESCE(${beat.progress}::jsonb, progress)
     WHERE id = ${beat.id} AND ${openForReport(beat.maxDeliveries)} AND lease_token_hash = ${beat.tokenHash}
       AND (${beat.progress}::jsonb IS NOT NULL
            OR (lease_expires_at < now() + make_interval(secs => ${beat.extendSeconds} / 2.0) AND ${NEW_LEASE} > lease_expires_at))
    RETURNING lease_expires_at, cancel_requested
  )
  SELECT c.open AND c.own AS accepted, COALESCE(u.lease_expires_at, c.lease_expires_at) AS "leaseExpiresAt",
         COALESCE(u.cancel_requested, c.cancel_requested) AS "cancelRequested", u.lease_expires_at IS NOT NULL AS written
    FROM current c LEFT JOIN updated u ON true`;

/** The error of a task cancelled before any executor held it. */
export const CANCELLED_WAITING = { code: 'Cancelled', message: 'cancelled before an executor took it' } as const;

/** Cancel's and retry's parameters: the task and the delivery limit. */
const BY_ID_PARAMETERS = namedParameters(['id', 'maxDeliveries']);
const byId = BY_ID_PARAMETERS.$;

/**
 * Cancel: a task with a live lease is asked to stop (`cancel_requested`, it stays Pending until its executor
 * reports or its lease ends); any other pending task (waiting, or its lease ran out with attempts left)
 * fails `Cancelled` at once. Nothing for a task that ended, in the view's terms.
 */
const CANCEL = `
  UPDATE insight_task
     SET cancel_requested = COALESCE(lease_expires_at > now(), false),
         state = CASE WHEN lease_expires_at > now() THEN 'Pending' ELSE 'Failed' END,
         error_code = CASE WHEN lease_expires_at > now() THEN NULL ELSE '${CANCELLED_WAITING.code}' END,
         error_message = CASE WHEN lease_expires_at > now() THEN NULL ELSE '${CANCELLED_WAITING.message}' END,
         available_at = NULL
   WHERE id = ${byId.id} AND state = 'Pending' AND NOT ${endedWithLeaseSql(byId.maxDeliveries)}
  RETURNING state, error_code AS "errorCode", error_message AS "errorMessage"`;

/**
 * Retry: a Failed task (also one the view shows Failed) waits again with fresh attempts counting from 1; its
 * last attempt moves to the log, so the view keeps every earlier attempt. It leaves the deduplication index
 * (dedupe_key): an identical task may be pending now, and deduplication still finds this one by its content.
 */
const RETRY = `
  UPDATE insight_task t
     SET state = 'Pending', deliveries = 0, lease_expires_at = NULL, available_at = NULL, cancel_requested = false,
         error_code = NULL, error_message = NULL, dedupe_key = NULL, progress = NULL,
         attempt_log = CASE WHEN t.attempt_taken_at IS NULL THEN t.attempt_log
                            ELSE t.attempt_log || ${loggedAttempt(`COALESCE(t.attempt_outcome, 'leaseExpired')`, 'COALESCE(t.attempt_ended_at, t.lease_expires_at)', 't.attempt_error', 't.report_digest')} END,
         lease_token_hash = NULL, attempt_key_id = NULL, attempt_executor = NULL, attempt_taken_at = NULL,
         attempt_ended_at = NULL, attempt_outcome = NULL, attempt_error = NULL, report_digest = NULL
   WHERE id = ${byId.id} AND (state = 'Failed' OR ${endedWithLeaseSql(byId.maxDeliveries)})
  RETURNING id`;

/** Who takes: the key (recorded per attempt, for reports without a token), the executor's own name, its schemas. */
export interface Taker {
  keyId: number;
  executor: string | null;
  schemas: string[] | null;
}

/**
 * TAKE's values: up to `limit` tasks leased for `leaseSeconds`; tasks past their attempt limit (their own
 * maxAttempts, else `maxDeliveries`) get deliveryLimitError. Without a taker (the bench's raw baselines):
 * any schema, no key, no executor name.
 */
function takeParameters(limit: number, maxDeliveries: number, leaseSeconds: number, taker: Taker | null = null): unknown[] {
  return TAKE_PARAMETERS.values({
    limit,
    maxDeliveries,
    leaseSeconds,
    schemas: taker?.schemas ?? null,
    executor: taker?.executor ?? null,
    keyId: taker?.keyId ?? null,
  });
}

/** A report's fencing: the SHA-256 of its lease token (null: none given), its key, its digest. */
export interface ReportFence {
  tokenHash: Buffer | null;
  keyId: number;
  digest: Buffer;
}

/** COMPLETE's values. Without a fence (the bench's raw baselines): a report without token, key or digest, as the SDK's. */
function completeParameters(id: string, maxDeliveries: number, result: unknown, fence: ReportFence | null = null): unknown[] {
  return COMPLETE_PARAMETERS.values({
    id,
    maxDeliveries,
    result: JSON.stringify(result),
    tokenHash: fence?.tokenHash ?? null,
    keyId: fence?.keyId ?? null,
    digest: fence?.digest ?? null,
  });
}

/**
 * The statements the bench runs raw (TasksRepository.take and complete) with their values, and the other
 * reports with their parameters by name (TasksRepository fills them).
 */
export const TASK_STATEMENTS = {
  take: TAKE,
  takeParameters,
  complete: COMPLETE,
  completeParameters,
  fail: FAIL,
  failParameters: FAIL_PARAMETERS,
  heartbeat: HEARTBEAT,
  heartbeatParameters: HEARTBEAT_PARAMETERS,
  cancel: CANCEL,
  retry: RETRY,
  /** Cancel's and retry's. */
  byIdParameters: BY_ID_PARAMETERS,
} as const;
