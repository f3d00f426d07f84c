import { failure, type FormatRecord } from './forms.js';

/**
 * Inputs of the line formats: a whole string or bytes, or chunks of either as they arrive (a response
 * body), so that a source run parses a large list with bounded memory.
 */
export type Chunk = string | Uint8Array;
export type Chunks = Chunk | Iterable<Chunk> | AsyncIterable<Chunk>;

/** Thrown inside the line reader only, and turned into a `NotUtf8` failure by every format. */
export class NotUtf8 extends Error {}

async function* chunksOf(input: Chunks): AsyncGenerator<Chunk> {
  if (typeof input === 'string' || input instanceof Uint8Array) yield input;
  else yield* input as AsyncIterable<Chunk>;
}

/**
 * The text of the chunks, decoded as UTF-8 across chunk boundaries (a BOM dropped), piece by piece.
 * Invalid UTF-8 throws `NotUtf8`.
 */
export async function* textOf(input: Chunks): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of chunksOf(input)) {
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      if (text !== '') yield text;
    }
    const rest = decoder.decode();
    if (rest !== '') yield rest;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw new NotUtf8('the body is not valid UTF-8');
    throw error;
  }
}

/** The lines of the chunks with their 1-based numbers (`\n` or `\r\n`); only the line under way is held. */
export async function* linesOf(input: Chunks): AsyncGenerator<{ line: number; text: string }> {
  let pending = '';
  let line = 0;
  for await (const text of textOf(input)) {
    pending += text;
    let start = 0;
    let end: number;
    while ((end = pending.indexOf('\n', start)) >= 0) {
      yield { line: ++line, text: pending.slice(start, end).replace(/\r$/, '') };
      start = end + 1;
    }
    pending = pending.slice(start);
  }
  if (pending !== '') yield { line: ++line, text: pending.replace(/\r$/, '') };
}

/** The records of a streamed format, ended by a `NotUtf8` failure when its bytes are not UTF-8. */
export async function* decodedRecords(records: AsyncIterable<FormatRecord>): AsyncGenerator<FormatRecord> {
  try {
    yield* records;
  } catch (error) {
    if (!(error instanceof NotUtf8)) throw error;
    yield { kind: 'failed', failure: failure('NotUtf8', error.message) };
  }
}
