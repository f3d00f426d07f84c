import { ApiError, CommonErrors, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';

/** Sources' own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts). */
export const SOURCES_ERROR_CODES = registerErrorCodes({ DuplicateSource: 409, RunInProgress: 409, CollectionNotFound: 422 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof SOURCES_ERROR_CODES> {}
}

export const SourcesErrors = {
  notFound: (name: string) => CommonErrors.notFound(`source ${name} does not exist`),
  duplicate: (name: string) => new ApiError('DuplicateSource', `source ${name} already exists`),
  collectionNotFound: (name: string) => new ApiError('CollectionNotFound', `collection ${name} does not exist`, { field: 'collection' }),
  runInProgress: (name: string) => new ApiError('RunInProgress', `a run of source ${name} is in progress`),
};
