import { ApiError, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';
import type { SchemaNamespace } from './schema-registry.service.js';

/** The schema registry's own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts). */
export const SCHEMA_REGISTRY_ERROR_CODES = registerErrorCodes({ DuplicateSchema: 409, InvalidSchemaID: 422, SchemaNotFound: 422, SchemaCheckFail: 422 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof SCHEMA_REGISTRY_ERROR_CODES> {}
}

/** One violation in the wire form of wire-contract §5.2 (PascalCase keys). */
export interface SchemaViolation {
  AbsoluteKeywordLocation: string;
  InstanceLocation: string;
  Message: string;
}

export const SchemaRegistryErrors = {
  invalidDocument: (message: string) => new ApiError('InvalidData', message),
  unsupportedPattern: (pattern: string, reason: string) =>
    new ApiError(
      'InvalidData',
      `the pattern ${JSON.stringify(pattern)} is not supported: schema patterns run on a linear-time engine (RE2 syntax), ` +
        `which has no backreferences, lookahead or lookbehind (${reason})`,
      { pattern },
    ),
  duplicate: (schemaId: string) => new ApiError('DuplicateSchema', `schema ${schemaId} already exists`),
  notFound: (schemaId: string) => new ApiError('NotFound', `schema ${schemaId} does not exist`),
  schemaIdChanged: (pathId: string, bodyId: string) =>
    new ApiError('InvalidSchemaID', `the schemaID of a schema cannot change: path ${pathId}, body ${bodyId}`),
  schemaNotFound: (namespace: SchemaNamespace, schemaId: string) => new ApiError('SchemaNotFound', `${namespace} schema ${schemaId} does not exist`),
  /**
   * `violations` may be the first ones of `errorCount`; the details then say how many there were. When the
   * object was too large for a full report (`complete` false) only the first violation is known.
   */
  checkFailed: (schemaId: string, violations: SchemaViolation[], errorCount = violations.length, complete = true) =>
    new ApiError(
      'SchemaCheckFail',
      `the object does not match schema ${schemaId}: ${violations[0].InstanceLocation || '/'} ${violations[0].Message}` +
        (errorCount > violations.length ? ` (and ${errorCount - 1} more violations; the first ${violations.length} are listed)` : '') +
        (complete ? '' : ' (the object is too large to list every violation; the first is shown)'),
      {
        ...violations[0],
        errors: violations,
        ...(errorCount > violations.length && { errorCount }),
        ...(!complete && { complete: false }),
      },
    ),
};
