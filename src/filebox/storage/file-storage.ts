import type { Readable, Transform } from 'node:stream';

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
  /** Bytes `start..end` (inclusive, zero-based) of blob `key`; only that range is read from storage. */
  read(key: string, start: number, end: number): Readable;
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
