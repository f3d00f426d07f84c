/**
 * The generic error codes: wire code → HTTP status (wire-contract §5, decisions §5), the ones common/, the
 * framework's refusals and the wiring answer with. An area's own codes are its own: its `<area>.errors.ts`
 * registers them with `registerErrorCodes` and merges them into `ErrorStatusTable` (see `src/auth/auth.errors.ts`),
 * so that this file names no area. Every error the service answers with carries a registered code.
 */
export const COMMON_ERROR_STATUS = {
  BadRequest: 400,
  InvalidData: 400,
  InvalidPathArgument: 400,
  InvalidQueryArgument: 400,
  Unauthorized: 401,
  MissingPermissions: 403,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  RequestTimeout: 408,
  ResourceModified: 412,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  RangeNotSatisfiable: 416,
  RequestHeaderFieldsTooLarge: 431,
  InvalidKeyFormat: 422,
  InvalidKeySet: 422,
  LimitExceeded: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
} as const;

/** A table of codes as `ErrorStatusTable` takes it (code → its status as a literal type). */
export type ErrorCodesOf<Codes> = { -readonly [Code in keyof Codes]: Codes[Code] };

/**
 * Every code and its status, as the compiler knows them: the generic ones here, each area's merged in by its
 * `<area>.errors.ts` (`declare module '../common/errors/api-error.js' { interface ErrorStatusTable extends
 * ErrorCodesOf<typeof AUTH_ERROR_CODES> {} }`). Two areas that name one code must give it the same status (the compiler
 * and `registerErrorCodes` refuse otherwise).
 */
export interface ErrorStatusTable extends ErrorCodesOf<typeof COMMON_ERROR_STATUS> {}

export type ErrorCode = keyof ErrorStatusTable;

const table: Record<string, number> = { ...COMMON_ERROR_STATUS };

/**
 * The one table of error codes at run time: the generic ones and every area's registered ones (the whole
 * table once the areas are loaded; `src/app/error-codes.ts` loads them all).
 */
export const ERROR_STATUS: Readonly<ErrorStatusTable> = table as unknown as ErrorStatusTable;

/** Adds an area's codes to the table (from its `<area>.errors.ts`); a code already there keeps its status or throws. */
export function registerErrorCodes<const Codes extends Record<string, number>>(codes: Codes): Codes {
  for (const [code, status] of Object.entries(codes)) {
    const known = table[code];
    if (known !== undefined && known !== status) throw new Error(`error code ${code} is registered with status ${known}, not ${status}`);
    table[code] = status;
  }
  return codes;
}

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

  /** The code's status; 500 for a code whose area's `<area>.errors.ts` was never loaded (a bug, never a client's). */
  get status(): number {
    return (ERROR_STATUS[this.code] as number | undefined) ?? 500;
  }
}

/** Errors shared by every area. */
export const CommonErrors = {
  badRequest: (message: string, details?: Record<string, unknown>) => new ApiError('BadRequest', message, details),
  invalidData: (message: string, details?: Record<string, unknown>) => new ApiError('InvalidData', message, details),
  invalidQuery: (message: string, details?: Record<string, unknown>) => new ApiError('InvalidQueryArgument', message, details),
  invalidPath: (message: string, details?: Record<string, unknown>) => new ApiError('InvalidPathArgument', message, details),
  notFound: (message = 'not found') => new ApiError('NotFound', message),
  unauthorized: (message = 'valid credentials are required') => new ApiError('Unauthorized', message),
  missingPermissions: (message = 'the key lacks the permission this operation requires') => new ApiError('MissingPermissions', message),
  resourceModified: (message = 'the tag is stale: re-read the resource and repeat') => new ApiError('ResourceModified', message),
  tooLarge: (message = 'request content is too large') => new ApiError('RequestEntityTooLarge', message),
  /** Retry-After: about the time the pool waits for a connection before giving up (data-source-options.ts). */
  databaseUnavailable: () => new ApiError('ServiceUnavailable', 'the database is not reachable: retry later', undefined, { 'Retry-After': '5' }),
};
