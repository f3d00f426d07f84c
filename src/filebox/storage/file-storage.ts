import type { Readable, Transform } from 'node:stream';

/**
 * A byte range of a blob, read on demand into the caller's buffers: the download path sends from a few
 * reused buffers instead of a fresh Buffer per chunk (see `send-range.ts`).
 */
export interface RangeReader {
  /**
   * Fills `buffer` from its start with the next bytes of the range; resolves with their count, 0 once the
   * range is done. A blob shorter than the range is an error. One read at a time.
   */
  read(buffer: Buffer): Promise<number>;
  /** Releases the descriptor or connection; safe more than once and while a read is pending (that read fails or ends). */
  close(): Promise<void>;
}

/** DI token of the storage backend (FILEBOX_STORAGE picks the class bound to it). */
export const FILE_STORAGE = Symbol('FILE_STORAGE');

/**
 * Where file and part content lives: immutable blobs. Keys are server-generated UUIDs, never client input.
 * Every write is all-or-nothing: a key becomes readable only once its whole content is stored, and a
 * failed or aborted write leaves nothing readable (what a crash leaves behind is removed by `sweep`).
 * Errors meant for the client (storage unreachable) are `ApiError`s; anything else is a 500.
 */
export interface FileStorage {
  /**
   * Streams `source` through `through` (digests, limits) into a new blob `key`; rejects with the first
   * stream error. `length`, when known in advance, lets a backend stream without buffering.
   */
  put(key: string, source: Readable, through: readonly Transform[], length?: number): Promise<void>;
  /**
   * Bytes `start..end` (inclusive, zero-based) of blob `key`; only that range is read from storage. Resolves
   * once the blob is open (a missing or unreachable one rejects here, before anything is sent).
   */
  openRange(key: string, start: number, end: number): Promise<RangeReader>;
  /** Removes the blob; an absent blob is not an error. */
  delete(key: string): Promise<void>;
  /** Pages of the keys of blobs last written before `before` (candidates for the orphan sweep). */
  listBlobs(before: Date): AsyncIterable<string[]>;
  /** Removes what interrupted writes left behind before `before` (temporaries, incomplete multipart uploads). */
  sweepTemporaries(before: Date): Promise<number>;
  /** Resolves when the storage answers (readiness); rejects with the reason otherwise. */
  check(): Promise<void>;
  /** A short description for logs (`local disk /data/files`, `s3://bucket/prefix/`). */
  readonly description: string;
}
