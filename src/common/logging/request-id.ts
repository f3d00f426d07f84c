import { randomUUID } from 'node:crypto';

/** Printable ASCII only, at most 128 characters: anything else could forge or flood log lines. */
const ACCEPTABLE = /^[\x21-\x7e][\x20-\x7e]{0,127}$/;

/** The client's `X-Request-Id` when it is safe to log and echo; otherwise a fresh UUID replaces it. */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && ACCEPTABLE.test(header) ? header : randomUUID();
}
