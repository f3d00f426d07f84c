import { ApiError, CommonErrors, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';
import { TAXII_MAX_CONTENT_LENGTH } from './taxii-limits.js';

/**
 * TAXII's own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts).
 * `StixNotSupported` is an item's failure in a status resource, never a whole answer's.
 */
export const TAXII_ERROR_CODES = registerErrorCodes({ StixNotSupported: 422 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof TAXII_ERROR_CODES> {}
}

export const TaxiiErrors = {
  notAcceptable: () => new ApiError('NotAcceptable', 'the Accept header allows neither application/taxii+json;version=2.1 nor */*'),
  unsupportedMediaType: () => new ApiError('UnsupportedMediaType', 'a TAXII request body is application/taxii+json;version=2.1'),
  collectionNotFound: (id: string) => new ApiError('NotFound', `no collection has the id ${id}`),
  readOnlyView: (id: string) => new ApiError('Forbidden', `the collection ${id} is a read-only view (can_write: false)`),
  objectNotFound: (id: string) => new ApiError('NotFound', `the collection has no object ${id}`),
  noSuchResource: () => new ApiError('NotFound', 'no TAXII resource has this path and method'),
  statusNotFound: (id: string) => new ApiError('NotFound', `no status ${id}`),
  tooLarge: () => CommonErrors.tooLarge(`an envelope is at most ${TAXII_MAX_CONTENT_LENGTH} bytes (max_content_length)`),
  invalidEnvelope: (message: string) => CommonErrors.invalidData(message),
  invalidQuery: (message: string) => CommonErrors.invalidQuery(message),
};
