import { ApiError, CommonErrors } from '../../common/errors/api-error.js';
import type { FormatFailure } from '../../formats/forms.js';
import { MAX_BATCH_ITEMS } from '../batch/batch-body.js';

/** Errors of imports: the request is refused as a whole and nothing is written. */
export const ImportErrors = {
  empty: () => CommonErrors.invalidData('the request body is empty'),
  binary: () => CommonErrors.invalidData('the request body is binary (it holds NUL bytes); send text'),
  notUtf8: () => CommonErrors.invalidData('the request body is not valid UTF-8'),
  charset: (charset: string) => new ApiError('UnsupportedMediaType', `the body must be UTF-8 text, not ${charset}`),
  tooMany: (count: number) => CommonErrors.tooLarge(`the body holds ${count} indicators; an import takes at most ${MAX_BATCH_ITEMS}: split it`),
  /** A CSV the format refuses whole (malformed, a named column missing): its message, and the column. */
  csv: (failure: FormatFailure) => CommonErrors.invalidData(failure.message, failure.column === undefined ? undefined : { column: failure.column }),
  csvColumnsRequired: () => CommonErrors.invalidQuery('format=csv needs typeColumn and valueColumn'),
  csvColumnsNotTaken: () => CommonErrors.invalidQuery('typeColumn, valueColumn and contextColumns apply to format=csv only'),
  contextQuery: () => CommonErrors.invalidQuery('context must be a JSON object'),
  contextHeader: () => CommonErrors.badRequest('X-Import-Context must be a JSON object'),
  twoContexts: () => CommonErrors.badRequest('give the context once: in the context parameter or in X-Import-Context'),
};
