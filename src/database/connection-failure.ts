import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';

/** Network failures reaching the database (the error's `code` as Node's sockets and DNS report it). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is gone or not ready: class 08 (connection exception), shutting down or
 * starting up (57P01–57P03), too many connections (53300).
 */
function isUnavailableState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** What node-postgres and its pool say when a connection breaks or cannot be had in time (they set no code). */
const CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * Whether an error means "the database cannot be reached now" (worth retrying later) rather than a fault of
 * the request or of the code: the service answers such errors with 503, and start-up waits through them.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  // TypeORM releases a transaction's connection on its own only when that connection failed (seen when
  // PostgreSQL is killed during a session completion); the next query on it then fails with one of these.
  if (error instanceof QueryRunnerProviderAlreadyReleasedError || error instanceof QueryRunnerAlreadyReleasedError) {
    return true;
  }
  const cause = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
  if (typeof cause !== 'object' || cause === null) return false;
  const { code, message, errors } = cause as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isUnavailableState(code))) return true;
  if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
  // Connecting to a name with several addresses fails with an AggregateError of one error per address.
  return Array.isArray(errors) && errors.length > 0 && errors.every(isDatabaseUnavailable);
}
