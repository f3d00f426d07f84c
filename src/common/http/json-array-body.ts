import { Readable } from 'node:stream';

/** A page's JSON array, serialised item by item. */
export interface JsonArrayBody {
  /** How many of the items it holds (a prefix). */
  count: number;
  /** Its exact length in bytes (UTF-8). */
  bytes: number;
  /** The array text, streamed part by part: never joined into one string. */
  stream: Readable;
}

/**
 * The JSON array of the longest prefix of `items` whose serialised size fits in `maxBytes`, and at least the
 * first item (one larger than the cap goes out alone). Each item is serialised on its own and the parts are
 * streamed, so a page costs about the cap in memory and no string grows past one item (a single string of a
 * whole page of large objects exceeded V8's string limit: `RangeError: Invalid string length`).
 */
export function jsonArrayWithin(items: readonly unknown[], maxBytes: number): JsonArrayBody {
  const parts: string[] = [];
  let bytes = 2; // the brackets
  for (const item of items) {
    const json = JSON.stringify(item);
    const size = Buffer.byteLength(json) + (parts.length > 0 ? 1 : 0);
    if (parts.length > 0 && bytes + size > maxBytes) break;
    parts.push(json);
    bytes += size;
  }
  const count = parts.length;
  return { count, bytes, stream: Readable.from(drain(parts), { objectMode: false }) };
}

/** `[`, the parts separated by commas, `]`; each part is released once it has been handed on. */
function* drain(parts: string[]): Generator<string> {
  yield '[';
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index];
    parts[index] = '';
    yield index === 0 ? part : `,${part}`;
  }
  yield ']';
}
