/**
 * The task queue's statements, as text with the parameter builders of taking and completing, in a module
 * that imports nothing: the bench (row 6 and the stack floor, bench/rows/service-statements.ts) loads them
 * from the service build, so its raw `pg` baselines run exactly these statements and cannot drift from them.
 *
 * Every lease decision reads the database clock (`now()`, one value per statement), so all instances agree.
 */

/** The error a task gets once it has been delivered `maxDeliveries` times without a report (decisions §9). */
export function deliveryLimitError(maxDeliveries: number): { code: string; message: string } {
  return {
    code: 'DeliveryLimitExceeded',
    message: `no executor reported a result within the lease on any of ${maxDeliveries} deliveries`,
  };
}

/** The error of a task cancelled while leased whose lease ran out without a report. */
export const CANCELLED_UNREPORTED = { code: 'Cancelled', message: 'cancelled; the lease ran out without a report' } as const;

/** The attempt limit of a task: its own `maxAttempts`, else TASK_MAX_DELIVERIES ($2 in every statement). */
const MAX_ATTEMPTS = `COALESCE(max_attempts, $2)`;

/**
 * A report (completion, failure or heartbeat) is accepted for a pending task with a current attempt (a
 * lease, running or run out): a late report after an expired lease still counts unless that lease was the
 * last allowed one or the task was cancelled meanwhile, which makes the task Failed (decisions §9, §16).
 */
export const OPEN_FOR_REPORT = `state = 'Pending' AND lease_expires_at IS NOT NULL AND (lease_expires_at > now() OR (deliveries < ${MAX_ATTEMPTS} AND NOT cancel_requested))`;

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

// One statement, so taking is atomic without an explicit transaction:
// 1. tasks whose last allowed lease ran out, or that were cancelled while leased and whose lease ran out,
//    become Failed (DeliveryLimitExceeded or Cancelled); no timer needed;
// 2. quotas (`locked`): the quota rows of the schemas this take may serve are locked, skipping those
//    another take holds right now (their tasks wait for a later take). A locked row is the latest version;
//    when it differs from the one this statement's snapshot saw (`handouts` moved), a take committed since
//    the snapshot and its leases are invisible here, so that schema hands out nothing this time. Otherwise
//    every hand-out of the schema is visible or waits behind this lock, so `remaining` (the least of each
//    window's limit minus its use, and of maxLeased minus the live leases) is exact across instances;
// 3. up to $1 takeable tasks (waiting and past any back-off, or with a lease run out and attempts left; of
//    the schemas $6 when given; none of a paused schema or of a quota with nothing left), by priority then
//    age, are locked, skipping rows other executors hold right now; of each quota'd schema only its first
//    `remaining` are kept (`picked`), and its windows count them (`counted`);
// 4. each gets a new attempt: a lease of $3 seconds and a fresh token (244 random bits from two v4 UUIDs,
//    returned once, stored as its SHA-256), taken by key $8 and executor $7; an attempt whose lease had run
//    out moves to the log as `leaseExpired`. Conditions 1 and 3 are disjoint, so no row is touched twice.
// The rows failed in step 1 come back too (without params), for their announcements.
const TAKE = `
  WITH exhausted AS (
    UPDATE insight_task
       SET state = 'Failed',
           error_code = CASE WHEN cancel_requested THEN '${CANCELLED_UNREPORTED.code}' ELSE $4 END,
           error_message = CASE WHEN cancel_requested THEN '${CANCELLED_UNREPORTED.message}' ELSE $5 END
     WHERE id IN (SELECT id FROM insight_task
                   WHERE state = 'Pending' AND lease_expires_at <= now() AND (deliveries >= ${MAX_ATTEMPTS} OR cancel_requested)
                   FOR UPDATE SKIP LOCKED)
    RETURNING id, error_code, error_message
  ), locked AS (
    SELECT * FROM insight_quota WHERE $6::text[] IS NULL OR schema_id = ANY ($6::text[])
       FOR UPDATE SKIP LOCKED
  ), quota AS (
    SELECT l.schema_id,
           CASE WHEN l.handouts <> seen.handouts THEN 0
                ELSE LEAST(COALESCE(l.per_minute - ${usedIn('l', 'minute')}, $1), COALESCE(l.per_hour - ${usedIn('l', 'hour')}, $1),
                           COALESCE(l.per_day - ${usedIn('l', 'day')}, $1),
                           COALESCE(l.max_leased - (SELECT count(*) FROM insight_task leased
                                                     WHERE leased.schema_id = l.schema_id AND leased.state = 'Pending'
                                                       AND leased.lease_expires_at > now())::int, $1)) END AS remaining
      FROM locked l JOIN insight_quota seen ON seen.schema_id = l.schema_id
  ), candidates AS (
    SELECT id, schema_id, priority, created_at, uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) AS token
      FROM insight_task
     WHERE state = 'Pending'
       AND (lease_expires_at IS NULL AND (available_at IS NULL OR available_at <= now())
            OR lease_expires_at <= now() AND deliveries < ${MAX_ATTEMPTS} AND NOT cancel_requested)
       AND ($6::text[] IS NULL OR schema_id = ANY ($6::text[]))
       -- Paused schemas, and quota'd ones with nothing left for this take: each set hashed once, not probed per row.
       AND schema_id NOT IN (SELECT schema_id FROM insight_schema_pause WHERE until > now())
       AND schema_id NOT IN (SELECT schema_id FROM insight_quota EXCEPT SELECT schema_id FROM quota WHERE remaining > 0)
     ORDER BY priority, created_at, id
     LIMIT $1
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
       SET deliveries = t.deliveries + 1, lease_expires_at = now() + make_interval(secs => $3),
           attempt_log = CASE WHEN t.lease_expires_at IS NULL THEN t.attempt_log
                              ELSE t.attempt_log || ${loggedAttempt(`'leaseExpired'`, 't.lease_expires_at', 'NULL', 'NULL::bytea')} END,
           lease_token_hash = sha256(picked.token), attempt_key_id = $8, attempt_executor = $7, attempt_taken_at = now(),
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
 * A completion: $1 the task id, $2 the delivery limit, $3 the result (JSON), $4 the token's SHA-256 (or
 * null), $5 the reporting key (or null), $6 the report's digest (or null). A result completes a task even
 * when it was cancelled meanwhile (§16).
 */
const COMPLETE = `
  UPDATE insight_task
     SET state = 'Completed', result = $3, attempt_ended_at = now(), attempt_outcome = 'completed', report_digest = $6
   WHERE id = $1 AND ${OPEN_FOR_REPORT} AND ${fenced('$4', '$5')}`;

/**
 * A failure of kind $9 (`permanent`, `transient`, `rateLimited`): $1 the task id, $2 the delivery limit,
 * $3/$4 the executor's code and message, $5 the token's SHA-256 (or null), $6 the reporting key, $7 the
 * report's digest, $8 the error as the attempt shows it (JSON), $10/$11 TASK_RETRY_BASE/MAX_SECONDS, $12
 * the back-off's random factor, $13 `retryAfterSeconds`.
 *
 * How it ends (`ending`, decided on the row locked by `target`, hence on its latest version):
 * - `cancelled` (cancel requested, any kind), `permanent`, `exhausted` (transient on the last attempt):
 *   the task is Failed and the attempt stays current, with its report's digest and its error (the task
 *   view shows an exhausted task's as `error.lastError`);
 * - `transient`: back to the queue after min(max, base × 2^(attempt−1)) × factor, the attempt used;
 * - `rateLimited`: back to the queue after $13 seconds, the attempt not used, and the schema paused as long
 *   (a later pause never shortens an earlier one).
 * Both requeues move the attempt into the log (with its token's hash and the report's digest, so a replay
 * is still recognised) and leave the task without a lease.
 */
const FAIL = `
  WITH target AS (
    SELECT id, schema_id,
           CASE WHEN cancel_requested THEN 'cancelled'
                WHEN $9 = 'transient' AND deliveries >= ${MAX_ATTEMPTS} THEN 'exhausted'
                ELSE $9 END AS ending
      FROM insight_task
     WHERE id = $1 AND ${OPEN_FOR_REPORT} AND ${fenced('$5', '$6')}
       FOR UPDATE
  ), paused AS (
    INSERT INTO insight_schema_pause (schema_id, until)
    SELECT schema_id, now() + make_interval(secs => $13) FROM target WHERE ending = 'rateLimited'
    ON CONFLICT (schema_id) DO UPDATE SET until = GREATEST(insight_schema_pause.until, EXCLUDED.until)
  )
  UPDATE insight_task t
     SET state = CASE WHEN ending IN ('transient', 'rateLimited') THEN 'Pending' ELSE 'Failed' END,
         error_code = CASE ending WHEN 'cancelled' THEN 'Cancelled' WHEN 'exhausted' THEN 'AttemptsExhausted'
                                  WHEN 'permanent' THEN $3 END,
         error_message = CASE ending WHEN 'cancelled' THEN 'cancelled; the executor reported ' || $3 || ': ' || $4
                                     WHEN 'exhausted' THEN 'attempt ' || t.deliveries || ' of ' || t.deliveries || ' failed transiently; its error is lastError'
                                     WHEN 'permanent' THEN $4 END,
         deliveries = CASE WHEN ending = 'rateLimited' THEN t.deliveries - 1 ELSE t.deliveries END,
         available_at = CASE ending
                          WHEN 'transient' THEN now() + make_interval(secs => LEAST($11::float8, $10::float8 * 2 ^ (t.deliveries - 1)) * $12::float8)
                          WHEN 'rateLimited' THEN now() + make_interval(secs => $13)
                          ELSE t.available_at END,
         attempt_log = CASE WHEN ending IN ('transient', 'rateLimited')
                            THEN t.attempt_log || ${loggedAttempt('ending', 'now()', '$8::jsonb', '$7::bytea')}
                            ELSE t.attempt_log END,
         lease_expires_at = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.lease_expires_at END,
         lease_token_hash = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.lease_token_hash END,
         attempt_key_id = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.attempt_key_id END,
         attempt_executor = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.attempt_executor END,
         attempt_taken_at = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.attempt_taken_at END,
         attempt_ended_at = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE now() END,
         attempt_outcome = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL
                                WHEN ending = 'exhausted' THEN 'transient' ELSE ending END,
         attempt_error = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE $8::jsonb END,
         report_digest = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE $7::bytea END,
         progress = CASE WHEN ending IN ('transient', 'rateLimited') THEN NULL ELSE t.progress END
    FROM target
   WHERE t.id = target.id
  RETURNING t.id, t.state, t.error_code AS "errorCode", t.error_message AS "errorMessage", t.available_at AS "availableAt"`;

/**
 * A heartbeat: $1 the task id, $2 the delivery limit, $3 the token's SHA-256, $4 `extendSeconds`, $5
 * TASK_MAX_LEASE_SECONDS, $6 the progress (JSON or null). The lease runs $4 seconds from now, capped at
 * the attempt's take + $5. The row is written only when that moves the lease and less than half of $4 is
 * left (or the lease ran out: the current token revives it), or when the heartbeat carries progress; any
 * other heartbeat reads the row and writes nothing, so thousands of leased tasks heartbeating often cost
 * about one row update per half lease each. `current` is the row as the statement's snapshot saw it
 * (absent: no such task), `updated` the new lease when written.
 */
const NEW_LEASE = `LEAST(now() + make_interval(secs => $4), attempt_taken_at + make_interval(secs => $5))`;
const HEARTBEAT = `
  WITH current AS (
    SELECT id, lease_expires_at, cancel_requested, (${OPEN_FOR_REPORT}) AS open, lease_token_hash = $3 AS own
      FROM insight_task WHERE id = $1
  ), updated AS (
    UPDATE insight_task
       SET lease_expires_at = ${NEW_LEASE}, progress = COALESCE($6::jsonb, progress)
     WHERE id = $1 AND ${OPEN_FOR_REPORT} AND lease_token_hash = $3
       AND ($6::jsonb IS NOT NULL OR (lease_expires_at < now() + make_interval(secs => $4 / 2.0) AND ${NEW_LEASE} > lease_expires_at))
    RETURNING lease_expires_at, cancel_requested
  )
  SELECT c.open AND c.own AS accepted, COALESCE(u.lease_expires_at, c.lease_expires_at) AS "leaseExpiresAt",
         COALESCE(u.cancel_requested, c.cancel_requested) AS "cancelRequested", u.lease_expires_at IS NOT NULL AS written
    FROM current c LEFT JOIN updated u ON true`;

/** The error of a task cancelled before any executor held it. */
export const CANCELLED_WAITING = { code: 'Cancelled', message: 'cancelled before an executor took it' } as const;

/** A task past its last allowed lease, or cancelled and past its lease: Failed, though no take recorded it yet. */
export const ENDED_WITH_LEASE = `(state = 'Pending' AND lease_expires_at <= now() AND (deliveries >= ${MAX_ATTEMPTS} OR cancel_requested))`;

/**
 * Cancel ($1 the task id, $2 the delivery limit): a task with a live lease is asked to stop
 * (`cancel_requested`, it stays Pending until its executor reports or its lease ends); any other pending
 * task (waiting, or its lease ran out with attempts left) fails `Cancelled` at once. Nothing for a task
 * that ended, in the view's terms.
 */
const CANCEL = `
  UPDATE insight_task
     SET cancel_requested = COALESCE(lease_expires_at > now(), false),
         state = CASE WHEN lease_expires_at > now() THEN 'Pending' ELSE 'Failed' END,
         error_code = CASE WHEN lease_expires_at > now() THEN NULL ELSE '${CANCELLED_WAITING.code}' END,
         error_message = CASE WHEN lease_expires_at > now() THEN NULL ELSE '${CANCELLED_WAITING.message}' END,
         available_at = NULL
   WHERE id = $1 AND state = 'Pending' AND NOT ${ENDED_WITH_LEASE}
  RETURNING state, error_code AS "errorCode", error_message AS "errorMessage"`;

/**
 * Retry ($1 the task id, $2 the delivery limit): a Failed task (also one the view shows Failed) waits
 * again with fresh attempts counting from 1; its last attempt moves to the log, so the view keeps every
 * earlier attempt. It leaves the deduplication index (dedupe_key): an identical task may be pending now,
 * and deduplication still finds this one by its content.
 */
const RETRY = `
  UPDATE insight_task t
     SET state = 'Pending', deliveries = 0, lease_expires_at = NULL, available_at = NULL, cancel_requested = false,
         error_code = NULL, error_message = NULL, dedupe_key = NULL, progress = NULL,
         attempt_log = CASE WHEN t.attempt_taken_at IS NULL THEN t.attempt_log
                            ELSE t.attempt_log || ${loggedAttempt(`COALESCE(t.attempt_outcome, 'leaseExpired')`, 'COALESCE(t.attempt_ended_at, t.lease_expires_at)', 't.attempt_error', 't.report_digest')} END,
         lease_token_hash = NULL, attempt_key_id = NULL, attempt_executor = NULL, attempt_taken_at = NULL,
         attempt_ended_at = NULL, attempt_outcome = NULL, attempt_error = NULL, report_digest = NULL
   WHERE id = $1 AND (state = 'Failed' OR ${ENDED_WITH_LEASE})
  RETURNING id`;

/** Who takes: the key (recorded per attempt, for reports without a token), the executor's own name, its schemas. */
export interface Taker {
  keyId: number;
  executor: string | null;
  schemas: string[] | null;
}

/**
 * TAKE's values: up to `limit` tasks leased for `leaseSeconds`; tasks past `maxDeliveries` get
 * deliveryLimitError. Without a taker (the bench's raw baselines): any schema, no key, no executor name.
 */
function takeParameters(limit: number, maxDeliveries: number, leaseSeconds: number, taker: Taker | null = null): unknown[] {
  const exhausted = deliveryLimitError(maxDeliveries);
  return [limit, maxDeliveries, leaseSeconds, exhausted.code, exhausted.message, taker?.schemas ?? null, taker?.executor ?? null, taker?.keyId ?? null];
}

/** A report's fencing: the SHA-256 of its lease token (null: none given), its key, its digest. */
export interface ReportFence {
  tokenHash: Buffer | null;
  keyId: number;
  digest: Buffer;
}

/** COMPLETE's values. Without a fence (the bench's raw baselines): a report without token, key or digest, as the SDK's. */
function completeParameters(id: string, maxDeliveries: number, result: unknown, fence: ReportFence | null = null): unknown[] {
  return [id, maxDeliveries, JSON.stringify(result), fence?.tokenHash ?? null, fence?.keyId ?? null, fence?.digest ?? null];
}

/** The statements the bench runs raw (TasksRepository.take and complete) with their values, and the other reports. */
export const TASK_STATEMENTS = {
  take: TAKE,
  takeParameters,
  complete: COMPLETE,
  completeParameters,
  fail: FAIL,
  heartbeat: HEARTBEAT,
  cancel: CANCEL,
  retry: RETRY,
} as const;
