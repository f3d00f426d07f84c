import { Transform, type TransformCallback } from 'node:stream';
import { StreamDigests } from './digest-worker.js';

export interface ContentDigests {
  size: number;
  md5: Buffer;
  sha1: Buffer;
  sha256: Buffer;
  sha512: Buffer;
}

/**
 * Pass-through that counts bytes on the way to storage and, for whole files, computes the decisions §10
 * digests (on a worker thread). Crossing `limit` fails the stream with `overLimit()` at once, so nothing
 * past it is stored.
 */
export class ContentMeter extends Transform {
  private count = 0;
  private readonly hasher: StreamDigests | undefined;

  constructor(
    private readonly limit: number,
    private readonly overLimit: () => Error,
    withDigests = true,
  ) {
    super();
    // Session parts are only counted: their digests would be computed again when the file is assembled.
    this.hasher = withDigests ? new StreamDigests() : undefined;
  }

  get size(): number {
    return this.count;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.limit) {
      callback(this.overLimit());
      return;
    }
    // The chunk goes on to storage at once; more input is taken once the hasher can accept it.
    this.push(chunk);
    if (!this.hasher) {
      callback();
      return;
    }
    this.hasher.update(chunk).then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (error) this.hasher?.discard();
    callback(error);
  }

  /** Once the stream has finished, on a meter built with digests. */
  async digests(): Promise<ContentDigests> {
    if (!this.hasher) throw new Error('this meter computes no digests');
    return { size: this.count, ...(await this.hasher.digests()) };
  }
}
