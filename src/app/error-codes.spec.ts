import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { COMMON_ERROR_STATUS, registerErrorCodes } from '../common/errors/api-error.js';
import { ERROR_STATUS } from './error-codes.js';

/** The whole table as it was when the areas began to register their own codes (issue 44), by code: no status moves. */
const FROZEN = {
  BadRequest: 400,
  BatchRejected: 422,
  CollectionNotFound: 422,
  CursorOutOfRange: 422,
  DuplicateCollection: 409,
  DuplicateSchema: 409,
  DuplicateTaxiiAlias: 409,
  DuplicateSource: 409,
  DuplicateWarninglist: 409,
  FileNotFound: 422,
  Forbidden: 403,
  InsufficientStorage: 507,
  InternalError: 500,
  InvalidData: 400,
  InvalidFilePart: 422,
  InvalidKeyFormat: 422,
  InvalidKeySet: 422,
  InvalidPathArgument: 400,
  InvalidQueryArgument: 400,
  InvalidRequestLimit: 422,
  InvalidSchemaID: 422,
  InvalidState: 422,
  KeySetConflict: 422,
  LeaseLost: 409,
  LimitExceeded: 429,
  LimitSetConflict: 422,
  MethodNotAllowed: 405,
  MissingFilePart: 422,
  MissingPermissions: 403,
  NotAcceptable: 406,
  NotFound: 404,
  ObjectNotFound: 404,
  QuotaNotFound: 404,
  RangeNotSatisfiable: 416,
  RequestEntityTooLarge: 413,
  RequestHeaderFieldsTooLarge: 431,
  RequestTimeout: 408,
  ResourceModified: 412,
  ResourceNotFound: 422,
  RunInProgress: 409,
  SchemaCheckFail: 422,
  SchemaNotFound: 422,
  ServiceUnavailable: 503,
  StixNotSupported: 422,
  TaskNotFound: 422,
  Unauthorized: 401,
  UnsupportedListType: 422,
  UnsupportedMediaType: 415,
  Warninglisted: 422,
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
