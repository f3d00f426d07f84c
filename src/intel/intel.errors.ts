import { ApiError } from '../common/errors/api-error.js';

export const IntelErrors = {
  collectionNotFound: (name: string) => new ApiError('NotFound', `collection ${name} does not exist`),
  duplicateCollection: (name: string) => new ApiError('DuplicateCollection', `collection ${name} already exists`),
};
