import { ApiError, registerErrorCodes, type ErrorCodesOf } from '../common/errors/api-error.js';
import { tlpOf, type TlpRank } from '../common/markings/tlp.js';

/** Auth's own error codes and their HTTP statuses, registered in the one table (common/errors/api-error.ts). */
export const AUTH_ERROR_CODES = registerErrorCodes({ ResourceNotFound: 422, InvalidRequestLimit: 422, LimitSetConflict: 422 });
declare module '../common/errors/api-error.js' {
  interface ErrorStatusTable extends ErrorCodesOf<typeof AUTH_ERROR_CODES> {}
}

export const AuthErrors = {
  unauthorized: (message = 'valid credentials are required') => new ApiError('Unauthorized', message),
  keyNotFound: (id: number) => new ApiError('NotFound', `API key ${id} does not exist`),
  resourceNotFound: (id: number) => new ApiError('ResourceNotFound', `resource ${id} does not exist`),
  cannotGrant: (resourceId: number, action: string) =>
    new ApiError('Forbidden', `a key can only grant what it holds: ${action} on resource ${resourceId} is not held`),
  cannotGrantTlp: (asked: TlpRank, own: TlpRank) =>
    new ApiError('Forbidden', `a key can only grant what it sees: maxTLP ${tlpOf(asked)} is above this key's own ${tlpOf(own)}`),
  limitedCreator: () => new ApiError('Forbidden', 'a key with request limits cannot create keys: the new key would escape those limits'),
  outlivesCreator: () => new ApiError('Forbidden', 'a key cannot create a key that expires after it (or never): set an earlier expiresAt'),
  limitSetConflict: (resourceId: number, action: string) => new ApiError('LimitSetConflict', `two request limits target ${action} on resource ${resourceId}`),
  invalidRequestLimit: (message: string) => new ApiError('InvalidRequestLimit', message),
  invalidExpiry: () => new ApiError('InvalidData', 'expiresAt is not a valid date and time'),
  expiryInPast: () => new ApiError('InvalidData', 'expiresAt must be in the future'),
  invalidNetwork: (network: string) => new ApiError('InvalidData', `allowedNetworks: ${JSON.stringify(network)} is not an IPv4 or IPv6 network (CIDR)`),
  limitExceeded: (retryAfterSeconds: number) =>
    new ApiError('LimitExceeded', 'request limit exceeded', undefined, { 'Retry-After': String(retryAfterSeconds) }),
};
