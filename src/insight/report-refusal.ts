/**
 * Why the queue refuses a report that changed nothing (extensions §16, fencing), as pure functions of what
 * the task's row says (TasksRepository.reportStanding) and of the report: TaskQueueService turns the answer
 * into its ApiError, report-refusal.spec.ts walks every branch.
 */

/** How a report that changed nothing relates to the task (TasksRepository.reportStanding). */
export interface ReportStanding {
  /** The task may take a report now (task-statements.ts, openForReport). */
  open: boolean;
  /** The token is the current attempt's (null: the report has no token). */
  current: boolean | null;
  /** Hex digest of the current attempt's accepted report. */
  currentReport: string | null;
  /** The token is an earlier attempt's. */
  earlier: boolean;
  /** Hex digest of that earlier attempt's accepted report. */
  earlierReport: string | null;
}

/** The report as the refusal reads it: whether it has a lease token, and its digest (hex). */
export interface RefusedReport {
  withToken: boolean;
  digest: string;
}

/**
 * - `replay`: the accepted report again, answered as it was (no error);
 * - `taskNotFound`: TaskNotFound;
 * - `invalidState`: the task takes no report (InvalidState);
 * - `otherReport`: the attempt made a different report already (InvalidState);
 * - `leaseLost`: the token is not the current attempt's (LeaseLost);
 * - `leasedByAnotherKey`: no token, and another key holds the live lease (LeaseLost).
 */
export type ReportRefusal = 'replay' | 'taskNotFound' | 'invalidState' | 'otherReport' | 'leaseLost' | 'leasedByAnotherKey';

/**
 * Why a fenced completion or failure changed nothing, in this order:
 * - no such task: taskNotFound;
 * - without a token: invalidState when the task takes no report, else another key's live lease (the fence
 *   refused it);
 * - the token of an attempt that made a report: a replay when the digests are equal, else otherReport;
 * - the current attempt's token otherwise: invalidState (the task ended: cancelled, or its last lease ran out);
 * - any other token (an earlier attempt's, or none the task ever had): leaseLost.
 */
export function reportRefusal(standing: ReportStanding | undefined, report: RefusedReport): ReportRefusal {
  if (!standing) return 'taskNotFound';
  if (!report.withToken) return standing.open ? 'leasedByAnotherKey' : 'invalidState';
  const accepted = standing.current ? standing.currentReport : standing.earlierReport;
  if (accepted !== null) return accepted === report.digest ? 'replay' : 'otherReport';
  return standing.current ? 'invalidState' : 'leaseLost';
}

/**
 * Why a heartbeat was not accepted (it always has a token; a heartbeat of an unknown task is refused before):
 * the current attempt's token on a task that takes no report any more is invalidState, any other token
 * leaseLost. A heartbeat is no report, so an accepted report of its attempt does not make it a replay.
 */
export function heartbeatRefusal(standing: ReportStanding | undefined): 'invalidState' | 'leaseLost' {
  return standing?.current ? 'invalidState' : 'leaseLost';
}
