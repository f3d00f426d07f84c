import type { Readable, Transform } from 'node:stream';

/** DI token of the storage backend; another implementation of `FileStorage` can be bound to it. */
export const FILE_STORAGE = Symbol('FILE_STORAGE');

/**
 * Where file and part content lives. Keys are server-generated UUIDs, never client input.
 * Every write is all-or-nothing: a key becomes readable only once its whole content is stored, and a
 * failed or aborted write leaves nothing behind.
 */
export interface FileStorage {
  /** Streams `source` through `through` (digests, limits) into a new blob `key`; rejects with the first stream error. */
  put(key: string, source: Readable, ...through: Transform[]): Promise<void>;
  /** Like `put`, with the content of the blobs `parts` in order as the source, read one at a time. */
  assemble(key: string, parts: readonly string[], ...through: Transform[]): Promise<void>;
  /** Bytes `start..end` (inclusive, zero-based) of blob `key`. */
  read(key: string, start: number, end: number): Readable;
  /** Removes the blob; an absent blob is not an error. */
  delete(key: string): Promise<void>;
}
