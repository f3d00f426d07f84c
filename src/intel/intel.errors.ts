import { ApiError, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';

/** Collections' own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts). */
export const COLLECTION_ERROR_CODES = registerErrorCodes({ DuplicateCollection: 409, DuplicateTaxiiAlias: 409 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof COLLECTION_ERROR_CODES> {}
}

export const IntelErrors = {
  collectionNotFound: (name: string) => new ApiError('NotFound', `collection ${name} does not exist`),
  duplicateCollection: (name: string) => new ApiError('DuplicateCollection', `collection ${name} already exists`),
  /** A collection name that a TAXII view already has as its alias (TAXII aliases are unique together). */
  nameIsTaxiiAlias: (name: string) => new ApiError('DuplicateCollection', `${name} is the alias of a TAXII view`),
  duplicateTaxiiAlias: (alias: string) => new ApiError('DuplicateTaxiiAlias', `the TAXII alias ${alias} is taken by another collection or view`),
};
