import { ApiError } from '../common/errors/api-error.js';

export const InsightErrors = {
  /** GET of an unknown (or malformed, hence impossible) task id. */
  taskViewNotFound: (taskId: string) => new ApiError('NotFound', `task ${taskId} does not exist`),
  /** A queue report naming an unknown task. */
  taskNotFound: (taskId: string) => new ApiError('TaskNotFound', `task ${taskId} does not exist`),
  invalidState: (taskId: string) =>
    new ApiError(
      'InvalidState',
      `task ${taskId} cannot take a report: it is Completed or Failed, or it has never been taken from the queue`,
    ),
  nothingToEnrich: () =>
    new ApiError('InvalidData', 'params needs objectKeys (non-empty) or fileID: a task must name what to enrich'),
  fileNotFound: (fileId: string) => new ApiError('FileNotFound', `file ${fileId} does not exist`),
};

/** The error a task gets once it has been delivered too often without a report (with the take's statement). */
export { deliveryLimitError } from './task-statements.js';
