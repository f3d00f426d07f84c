import { Transform, type TransformCallback } from 'node:stream';
import type { StreamDigests } from './digest-worker.js';

export interface ContentDigests {
  size: number;
  md5: Buffer;
  sha1: Buffer;
  sha256: Buffer;
  sha512: Buffer;
}

export interface MeterOptions {
  /** Crossing it fails the stream with `overLimit()` at once, so nothing past it is stored. */
  limit: number;
  overLimit: () => Error;
  /** Where the content is hashed on the way (decisions §10 digests); none: only counted. */
  digests?: StreamDigests;
  /** Fails the stream at its end when it held other than `limit` bytes (a part of a declared size). */
  exact?: (size: number) => Error;
}

/** Pass-through that counts bytes on the way to storage and hashes them when given a hasher. */
export class ContentMeter extends Transform {
  private count = 0;

  constructor(private readonly options: MeterOptions) {
    super();
  }

  get size(): number {
    return this.count;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.options.limit) {
      callback(this.options.overLimit());
      return;
    }
    // The chunk goes on to storage at once; more input is taken once the hasher can accept it.
    this.push(chunk);
    if (!this.options.digests) {
      callback();
      return;
    }
    this.options.digests.update(chunk).then(() => callback(), callback);
  }

  override _flush(callback: TransformCallback): void {
    // Before storage sees the end: a short part never becomes a stored blob.
    callback(this.options.exact && this.count !== this.options.limit ? this.options.exact(this.count) : null);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (error) this.options.digests?.discard();
    callback(error);
  }

  /** Once the stream has finished, on a meter with a hasher. */
  async digests(): Promise<ContentDigests> {
    if (!this.options.digests) throw new Error('this meter computes no digests');
    return { size: this.count, ...(await this.options.digests.digests()) };
  }
}
