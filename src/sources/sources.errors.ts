import { ApiError, CommonErrors } from '../common/errors/api-error.js';

export const SourcesErrors = {
  notFound: (name: string) => CommonErrors.notFound(`source ${name} does not exist`),
  duplicate: (name: string) => new ApiError('DuplicateSource', `source ${name} already exists`),
  collectionNotFound: (name: string) => new ApiError('CollectionNotFound', `collection ${name} does not exist`, { field: 'collection' }),
  runInProgress: (name: string) => new ApiError('RunInProgress', `a run of source ${name} is in progress`),
};
