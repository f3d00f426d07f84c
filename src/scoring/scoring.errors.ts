import { CommonErrors } from '../common/errors/api-error.js';
import { ObjectErrors } from '../intel/objects.errors.js';

/** Refusals of the explanation and override routes (extensions §18); no codes of their own. */
export const ScoringErrors = {
  invalidAt: () => CommonErrors.invalidQuery('at is not a valid date-time'),
  invalidUntil: () => CommonErrors.invalidData('until is not a valid date-time', { field: 'until' }),
  untilNotFuture: () => CommonErrors.invalidData('until must be in the future', { field: 'until' }),
  objectNotFound: ObjectErrors.objectNotFound,
};
