import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export interface ContentDigests {
  size: number;
  md5: Buffer;
  sha1: Buffer;
  sha256: Buffer;
  sha512: Buffer;
}

/**
 * Pass-through that counts bytes on the way to storage and, for whole files, computes the decisions §10
 * digests. Crossing `limit` fails the stream with `overLimit()` at once, so nothing past it is stored.
 */
export class ContentMeter extends Transform {
  private count = 0;
  private readonly hashes: Record<'md5' | 'sha1' | 'sha256' | 'sha512', Hash> | undefined;

  constructor(
    private readonly limit: number,
    private readonly overLimit: () => Error,
    withDigests = true,
  ) {
    super();
    // Session parts are only counted: their digests would be computed again when the file is assembled.
    this.hashes = withDigests
      ? { md5: createHash('md5'), sha1: createHash('sha1'), sha256: createHash('sha256'), sha512: createHash('sha512') }
      : undefined;
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
    if (this.hashes) for (const hash of Object.values(this.hashes)) hash.update(chunk);
    callback(null, chunk);
  }

  /** Valid once the stream has finished, on a meter built with digests. */
  digests(): ContentDigests {
    if (!this.hashes) throw new Error('this meter computes no digests');
    return {
      size: this.count,
      md5: this.hashes.md5.digest(),
      sha1: this.hashes.sha1.digest(),
      sha256: this.hashes.sha256.digest(),
      sha512: this.hashes.sha512.digest(),
    };
  }
}
