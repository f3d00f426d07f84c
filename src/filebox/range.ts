import { FileboxErrors } from './filebox.errors.js';

/** interface-spec §8: the largest `end - start` served in one response; a longer span is cut to it. */
export const MAX_RANGE_SPAN = 50 * 1024 * 1024;

export interface ByteSpan {
  start: number;
  end: number;
}

/** One range-spec; the unit is case-insensitive (RFC 9110 §14.1). Digits of any length: see resolveRange. */
const SINGLE_RANGE = /^bytes=(?:(\d+)-(\d*)|-(\d+))$/i;

/**
 * Resolves a `Range` header against a file of `total` (> 0) bytes, decisions §10: a single range only
 * (malformed, inverted or multi-range → 400), an end past the file clamped to the last byte, a span cut to
 * `MAX_RANGE_SPAN`, a start past the end → 416. Besides `a-b`, the RFC 9110 forms `a-` and `-n` are served.
 * Positions are compared as BigInts, so a number too large for a double is still just "past the end".
 */
export function resolveRange(header: string, total: number): ByteSpan {
  const match = SINGLE_RANGE.exec(header.trim());
  if (!match) throw FileboxErrors.malformedRange();
  const size = BigInt(total);
  let start: bigint;
  let end: bigint;
  if (match[3] !== undefined) {
    const suffix = BigInt(match[3]);
    if (suffix === 0n) throw FileboxErrors.rangeNotSatisfiable(total);
    start = suffix >= size ? 0n : size - suffix;
    end = size - 1n;
  } else {
    start = BigInt(match[1]);
    if (match[2] !== '' && BigInt(match[2]) < start) throw FileboxErrors.malformedRange();
    if (start >= size) throw FileboxErrors.rangeNotSatisfiable(total);
    end = match[2] === '' ? size - 1n : BigInt(match[2]);
  }
  const last = [end, size - 1n, start + BigInt(MAX_RANGE_SPAN)].reduce((a, b) => (b < a ? b : a));
  return { start: Number(start), end: Number(last) };
}
