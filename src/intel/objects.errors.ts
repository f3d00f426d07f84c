import { ApiError, CommonErrors, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';
import { TLP_INPUT_HINT } from '../common/markings/tlp.js';

/** Objects', their change feed's and batches' own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts). */
export const OBJECT_ERROR_CODES = registerErrorCodes({ ObjectNotFound: 404, KeySetConflict: 422, CursorOutOfRange: 422, BatchRejected: 422 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof OBJECT_ERROR_CODES> {}
}

/** Errors of intel objects and their change feed. */
export const ObjectErrors = {
  objectNotFound: () => new ApiError('ObjectNotFound', 'no live object of the collection holds this key'),
  keySetConflict: (message: string) => new ApiError('KeySetConflict', message),
  cursorOutOfRange: () => new ApiError('CursorOutOfRange', 'the cursor is older than the change retention window: list the objects again'),
  cursorRequired: () => CommonErrors.invalidQuery('cursor is required: take it from the object listing or a changes page'),
  foreignCursor: () => CommonErrors.invalidQuery('the cursor belongs to another collection'),
  unknownCursor: () => CommonErrors.invalidQuery('malformed cursor'),
  invalidExpiresAt: (message: string) => CommonErrors.invalidData(message),
  invalidTlp: () => CommonErrors.invalidData(`tlp must be ${TLP_INPUT_HINT}`, { field: 'tlp' }),
  unstorableContext: () => CommonErrors.invalidData('context strings may not contain NUL characters or unpaired UTF-16 surrogates'),
};
