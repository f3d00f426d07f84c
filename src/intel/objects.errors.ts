import { ApiError, CommonErrors } from '../common/errors/api-error.js';

/** Errors of intel objects and their change feed. */
export const ObjectErrors = {
  objectNotFound: () => new ApiError('ObjectNotFound', 'no live object of the collection holds this key'),
  keySetConflict: (message: string) => new ApiError('KeySetConflict', message),
  cursorOutOfRange: () =>
    new ApiError('CursorOutOfRange', 'the cursor is older than the change retention window: list the objects again'),
  cursorRequired: () => CommonErrors.invalidQuery('cursor is required: take it from the object listing or a changes page'),
  foreignCursor: () => CommonErrors.invalidQuery('the cursor belongs to another collection'),
  unknownCursor: () => CommonErrors.invalidQuery('malformed cursor'),
  invalidExpiresAt: (message: string) => CommonErrors.invalidData(message),
  unstorableContext: () =>
    CommonErrors.invalidData('context strings may not contain NUL characters or unpaired UTF-16 surrogates'),
};
