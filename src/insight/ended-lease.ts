/**
 * The rule "a pending task past its last lease has failed" (decisions §9, extensions §16), once in SQL and
 * once in TypeScript, side by side so that they cannot drift apart: the statements decide with the SQL
 * (taking records the failure, cancel and retry judge by it, the listing filters by it), the task view
 * shows a task Failed by the TypeScript before any take has recorded it. test/insight/ended-lease.e2e-spec.ts
 * evaluates both over a table of cases and expects the same answers.
 *
 * This module imports nothing: task-statements.ts, which the bench loads from the service build, uses it.
 * The SQL fragments read the columns of `insight_task` unqualified; `maxDeliveries` is the placeholder of
 * TASK_MAX_DELIVERIES in the statement at hand.
 */

/** The task's columns the rule reads, as TasksRepository reads them (`leaseExpired`: LEASE_EXPIRED). */
export interface LeaseStanding {
  state: string;
  /** Its lease ran out (judged by the database clock, like every lease decision); false without a lease. */
  leaseExpired: boolean;
  deliveries: number;
  maxAttempts: number | null;
  cancelRequested: boolean;
}

/** `leaseExpired` of LeaseStanding: the lease ran out by the database clock; false without a lease. */
export const LEASE_EXPIRED = `COALESCE(lease_expires_at <= now(), false)`;

/** The attempt limit of a task: its own `maxAttempts`, else TASK_MAX_DELIVERIES. */
export const attemptLimitSql = (maxDeliveries: string) => `COALESCE(max_attempts, ${maxDeliveries})`;

export function attemptLimit(task: Pick<LeaseStanding, 'maxAttempts'>, maxDeliveries: number): number {
  return task.maxAttempts ?? maxDeliveries;
}

/** The lease running (or run out) is the task's last: its attempts are used up, or it was cancelled meanwhile. */
export const lastLeaseSql = (maxDeliveries: string) => `(deliveries >= ${attemptLimitSql(maxDeliveries)} OR cancel_requested)`;

export function isLastLease(task: Omit<LeaseStanding, 'state' | 'leaseExpired'>, maxDeliveries: number): boolean {
  return task.cancelRequested || task.deliveries >= attemptLimit(task, maxDeliveries);
}

/**
 * A Pending task whose last lease ran out: Failed (DeliveryLimitExceeded, or Cancelled when cancelled), though
 * no take has recorded it yet. `lease_expires_at IS NOT NULL` keeps the fragment true or false, never NULL,
 * as the predicate is: `NOT` of it (cancel) then keeps a task without a lease, whatever its deliveries.
 */
export const endedWithLeaseSql = (maxDeliveries: string) =>
  `(state = 'Pending' AND lease_expires_at IS NOT NULL AND lease_expires_at <= now() AND ${lastLeaseSql(maxDeliveries)})`;

export function hasEndedWithLease(task: LeaseStanding, maxDeliveries: number): boolean {
  return task.state === 'Pending' && task.leaseExpired && isLastLease(task, maxDeliveries);
}
