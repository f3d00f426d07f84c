import { CommonErrors } from '../errors/api-error.js';

const BASE64URL = /^[A-Za-z0-9_-]{1,2048}$/;

/** Cursors are opaque base64url (URL-safe alphabet only, no padding) of a small JSON value. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor and checks its shape with `isValid`; anything else is 400 InvalidQueryArgument.
 * The guard is what keeps a forged cursor from reaching SQL.
 */
export function decodeCursor<T>(raw: string, isValid: (value: unknown) => value is T): T {
  if (!BASE64URL.test(raw)) throw CommonErrors.invalidQuery('malformed cursor');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw CommonErrors.invalidQuery('malformed cursor');
  }
  if (!isValid(value)) throw CommonErrors.invalidQuery('malformed cursor');
  return value;
}

/** Shape check for the common cursor form `{ "a": <positive safe integer> }` ("after this id"). */
export function isAfterIdCursor(value: unknown): value is { a: number } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    Number.isSafeInteger((value as { a?: unknown }).a) &&
    (value as { a: number }).a >= 0
  );
}

/** Decodes an optional "after this id" cursor; absent means from the start. */
export function afterIdFromCursor(raw: string | undefined): number {
  return raw === undefined ? 0 : decodeCursor(raw, isAfterIdCursor).a;
}

/** The cursor of the common form: the page after the row with this id. */
export function afterIdCursor(id: number): string {
  return encodeCursor({ a: id });
}

/**
 * A guard of newest-first positions `{t, i}`: `t` a time to the microsecond (UTC), `i` a row id matching
 * `idPattern` (listings ordered by time, then id).
 */
export function timeIdCursorGuard(idPattern: RegExp): (value: unknown) => value is { t: string; i: string } {
  return (value: unknown): value is { t: string; i: string } => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length !== 2) return false;
    const { t, i } = value as { t?: unknown; i?: unknown };
    return (
      typeof t === 'string' &&
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(t) &&
      !Number.isNaN(Date.parse(t)) &&
      typeof i === 'string' &&
      idPattern.test(i)
    );
  };
}
