import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { COMMON_ERROR_STATUS, registerErrorCodes } from '../common/errors/api-error.js';
import { ERROR_STATUS } from './error-codes.js';

/** The whole table as it was when the areas began to register their own codes (issue 44): no status moves. */
const FROZEN = {
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
};

const here = dirname(fileURLToPath(import.meta.url));

describe('the table of error codes', () => {
  it('holds exactly the codes and statuses of before, once every area has registered its own', () => {
    expect({ ...ERROR_STATUS }).toEqual(FROZEN);
  });

  it('is whole through error-codes.ts: it loads every <area>.errors.ts of src/', () => {
    const source = readFileSync(join(here, 'error-codes.ts'), 'utf8');
    const files = readdirSync(join(here, '..'), { recursive: true })
      .map(String)
      .filter((name) => name.endsWith('.errors.ts'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(source).toContain(`import '../${file.replace(/\.ts$/, '.js')}';`);
  });

  it('gives the generic codes of common/ their statuses of before', () => {
    for (const [code, status] of Object.entries(COMMON_ERROR_STATUS)) expect(FROZEN[code as keyof typeof FROZEN]).toBe(status);
  });

  it('refuses a second status for a code already registered, and takes the same one again', () => {
    expect(() => registerErrorCodes({ NotFound: 422 })).toThrow('error code NotFound is registered with status 404, not 422');
    expect(() => registerErrorCodes({ NotFound: 404 })).not.toThrow();
  });
});
