/**
 * The task queue's statements of taking and completing, as text with their parameter builders, in a module
 * that imports nothing: the bench (row 6 and the stack floor, bench/rows/service-statements.ts) loads them
 * from the service build, so its raw `pg` baselines run exactly these statements and cannot drift from them.
 */

/** The error a task gets once it has been delivered `maxDeliveries` times without a report (decisions §9). */
export function deliveryLimitError(maxDeliveries: number): { code: string; message: string } {
  return {
    code: 'DeliveryLimitExceeded',
    message: `no executor reported a result within the lease on any of ${maxDeliveries} deliveries`,
  };
}

/**
 * A report (completion or failure) is accepted for a pending task that has been taken at least once and
 * has not used up its deliveries: a late report after an expired lease still counts (decisions §9).
 * $1 is the task id, $2 the delivery limit.
 */
export const OPEN_FOR_REPORT = `state = 'Pending' AND deliveries > 0 AND (lease_expires_at > now() OR deliveries < $2)`;

// One statement, so taking is atomic without an explicit transaction:
// 1. tasks whose last allowed lease ran out become Failed (DeliveryLimitExceeded); no timer needed;
// 2. up to $1 takeable tasks, oldest first, are locked, skipping rows other executors hold right now;
// 3. they are leased for $3 seconds. Conditions 1 and 2 are disjoint, so no row is touched twice.
// The rows failed in step 1 come back too (without params), for their announcements.
const TAKE = `
  WITH exhausted AS (
    UPDATE insight_task SET state = 'Failed', error_code = $4, error_message = $5
     WHERE id IN (SELECT id FROM insight_task
                   WHERE state = 'Pending' AND lease_expires_at <= now() AND deliveries >= $2
                   FOR UPDATE SKIP LOCKED)
    RETURNING id
  ), picked AS (
    SELECT id FROM insight_task
     WHERE state = 'Pending' AND (lease_expires_at IS NULL OR (lease_expires_at <= now() AND deliveries < $2))
     ORDER BY created_at, id
     LIMIT $1
     FOR UPDATE SKIP LOCKED
  ), taken AS (
    UPDATE insight_task t
       SET deliveries = t.deliveries + 1, lease_expires_at = now() + make_interval(secs => $3)
      FROM picked
     WHERE t.id = picked.id
    RETURNING t.id, t.created_at, t.schema_id, t.object_keys, t.file_id
  )
  SELECT false AS exhausted, id, created_at AS "createdAt", schema_id AS "schemaId", object_keys AS "objectKeys",
         file_id AS "fileId"
    FROM taken
  UNION ALL
  SELECT true, id, NULL, NULL, NULL, NULL FROM exhausted
   ORDER BY "createdAt", id`;

/** A completion: $1 the task id, $2 the delivery limit, $3 the result (JSON). */
const COMPLETE = `UPDATE insight_task SET state = 'Completed', result = $3 WHERE id = $1 AND ${OPEN_FOR_REPORT}`;

/** TAKE's values: up to `limit` tasks leased for `leaseSeconds`; tasks past `maxDeliveries` get deliveryLimitError. */
function takeParameters(limit: number, maxDeliveries: number, leaseSeconds: number): unknown[] {
  const exhausted = deliveryLimitError(maxDeliveries);
  return [limit, maxDeliveries, leaseSeconds, exhausted.code, exhausted.message];
}

/** COMPLETE's values. */
function completeParameters(id: string, maxDeliveries: number, result: unknown): unknown[] {
  return [id, maxDeliveries, JSON.stringify(result)];
}

/** The statements the bench runs raw (TasksRepository.take and complete), each with its values. */
export const TASK_STATEMENTS = { take: TAKE, takeParameters, complete: COMPLETE, completeParameters } as const;
