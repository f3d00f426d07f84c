import { FileboxErrors } from './filebox.errors.js';

/** interface-spec §8: the largest `end - start` served in one response; a longer span is cut to it. */
export const MAX_RANGE_SPAN = 50 * 1024 * 1024;

export interface ByteSpan {
  start: number;
  end: number;
}

const SINGLE_RANGE = /^bytes=(?:(\d{1,16})-(\d{0,16})|-(\d{1,16}))$/;

/**
 * Resolves a `Range` header against a file of `total` (> 0) bytes, decisions §10: a single range only
 * (malformed or multi-range → 400), an end past the file clamped to the last byte, a span cut to
 * `MAX_RANGE_SPAN`, a start past the end → 416. Besides `a-b`, the RFC 9110 forms `a-` and `-n` are served.
 */
export function resolveRange(header: string, total: number): ByteSpan {
  const match = SINGLE_RANGE.exec(header.trim());
  if (!match) throw FileboxErrors.malformedRange();
  let start: number;
  let end: number;
  if (match[3] !== undefined) {
    const suffix = Number(match[3]);
    if (suffix === 0) throw FileboxErrors.rangeNotSatisfiable(total);
    start = Math.max(0, total - suffix);
    end = total - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? total - 1 : Number(match[2]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) {
      throw FileboxErrors.malformedRange();
    }
    if (start >= total) throw FileboxErrors.rangeNotSatisfiable(total);
  }
  return { start, end: Math.min(end, total - 1, start + MAX_RANGE_SPAN) };
}
