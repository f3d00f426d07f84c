import { ApiError, CommonErrors, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';

/** Insight's own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts). */
export const INSIGHT_ERROR_CODES = registerErrorCodes({ QuotaNotFound: 404, LeaseLost: 409, TaskNotFound: 422, FileNotFound: 422, InvalidState: 422 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof INSIGHT_ERROR_CODES> {}
}

export const InsightErrors = {
  /** GET of an unknown (or malformed, hence impossible) task id. */
  taskViewNotFound: (taskId: string) => new ApiError('NotFound', `task ${taskId} does not exist`),
  /** A queue report naming an unknown task. */
  taskNotFound: (taskId: string) => new ApiError('TaskNotFound', `task ${taskId} does not exist`),
  invalidState: (taskId: string) =>
    new ApiError('InvalidState', `task ${taskId} cannot take a report: it is Completed or Failed, or it has never been taken from the queue`),
  /** Cancel or retry of a task in a state that does not allow it (the report's message would mislead there). */
  cannotCancel: (taskId: string) => new ApiError('InvalidState', `task ${taskId} cannot be cancelled: it is Completed or Failed already`),
  cannotRetry: (taskId: string) => new ApiError('InvalidState', `task ${taskId} cannot be retried: only a Failed task can`),
  nothingToEnrich: () => new ApiError('InvalidData', 'params needs objectKeys (non-empty) or fileID: a task must name what to enrich'),
  fileNotFound: (fileId: string) => new ApiError('FileNotFound', `file ${fileId} does not exist`),
  /** Fencing (extensions §16): the report's attempt is not the task's current one. */
  leaseLost: (taskId: string, withToken: boolean) =>
    new ApiError(
      'LeaseLost',
      withToken
        ? `task ${taskId}: this lease token is not the current attempt's (its lease ran out and the task was taken again)`
        : `task ${taskId} is leased by another key now; report with the leaseToken of your attempt`,
    ),
  otherReport: (taskId: string) => new ApiError('InvalidState', `task ${taskId}: this attempt already made a different report (a replay must be identical)`),
  maxAgeWithoutResult: () => new ApiError('InvalidData', 'maxAgeSeconds is allowed only with dedupe: result'),
  dedupeContended: () => new ApiError('ServiceUnavailable', 'identical registrations kept racing; register again', undefined, { 'Retry-After': '1' }),
  quotaNotFound: (schemaId: string) => new ApiError('QuotaNotFound', `schema ${schemaId} has no quota`),
  emptyQuota: () => new ApiError('InvalidData', 'a quota needs at least one of perMinute, perHour, perDay, maxLeased'),
  attemptsFlag: () => CommonErrors.invalidQuery('attempts must be true or false'),
  retryAfterRule: () => new ApiError('InvalidData', 'error.retryAfterSeconds is required with kind rateLimited and allowed only there'),
};

/** The error a task gets once it has been delivered too often without a report (with the take's statement). */
export { deliveryLimitError } from './task-statements.js';
