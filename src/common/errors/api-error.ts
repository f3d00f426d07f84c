/**
 * The one table of error codes: wire code → HTTP status (wire-contract §5, decisions §5).
 * Every error the service answers with carries one of these codes.
 */
export const ERROR_STATUS = {
  BadRequest: 400,
  InvalidData: 400,
  InvalidPathArgument: 400,
  InvalidQueryArgument: 400,
  Unauthorized: 401,
  MissingPermissions: 403,
  Forbidden: 403,
  NotFound: 404,
  QuotaNotFound: 404,
  ObjectNotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  RequestTimeout: 408,
  DuplicateSchema: 409,
  DuplicateCollection: 409,
  LeaseLost: 409,
  DuplicateWarninglist: 409,
  DuplicateSource: 409,
  RunInProgress: 409,
  ResourceModified: 412,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  RangeNotSatisfiable: 416,
  RequestHeaderFieldsTooLarge: 431,
  ResourceNotFound: 422,
  InvalidSchemaID: 422,
  SchemaNotFound: 422,
  CollectionNotFound: 422,
  InvalidRequestLimit: 422,
  LimitSetConflict: 422,
  InvalidKeyFormat: 422,
  InvalidKeySet: 422,
  KeySetConflict: 422,
  SchemaCheckFail: 422,
  CursorOutOfRange: 422,
  BatchRejected: 422,
  StixNotSupported: 422,
  InvalidFilePart: 422,
  MissingFilePart: 422,
  FileNotFound: 422,
  TaskNotFound: 422,
  InvalidState: 422,
  UnsupportedListType: 422,
  Warninglisted: 422,
  LimitExceeded: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  InsufficientStorage: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A coded error. Areas create these through their `<area>.errors.ts`; the global filter writes them. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Errors shared by every area. */
export const CommonErrors = {
  badRequest: (message: string, details?: Record<string, unknown>) => new ApiError('BadRequest', message, details),
  invalidData: (message: string, details?: Record<string, unknown>) => new ApiError('InvalidData', message, details),
  invalidQuery: (message: string, details?: Record<string, unknown>) =>
    new ApiError('InvalidQueryArgument', message, details),
  invalidPath: (message: string, details?: Record<string, unknown>) =>
    new ApiError('InvalidPathArgument', message, details),
  notFound: (message = 'not found') => new ApiError('NotFound', message),
  unauthorized: (message = 'valid credentials are required') => new ApiError('Unauthorized', message),
  missingPermissions: (message = 'the key lacks the permission this operation requires') =>
    new ApiError('MissingPermissions', message),
  resourceModified: (message = 'the tag is stale: re-read the resource and repeat') =>
    new ApiError('ResourceModified', message),
  tooLarge: (message = 'request content is too large') => new ApiError('RequestEntityTooLarge', message),
  /** Retry-After: about the time the pool waits for a connection before giving up (data-source-options.ts). */
  databaseUnavailable: () =>
    new ApiError('ServiceUnavailable', 'the database is not reachable: retry later', undefined, { 'Retry-After': '5' }),
};
