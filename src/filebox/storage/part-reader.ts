import { Readable } from 'node:stream';
import type { FileStorage } from './file-storage.js';

/**
 * Bytes `start..end` (inclusive) of content stored as the blobs `keys` in order, each `partSize` bytes but
 * the last: only the blobs the range touches are read, each only over its share of the range. The next
 * blob is opened as soon as the current one starts, so that on S3 the request latency at a part boundary
 * overlaps the transfer of the part before it; both streams are backpressured, so memory stays bounded.
 */
export function readParts(
  storage: FileStorage,
  keys: readonly string[],
  partSize: number,
  start: number,
  end: number,
): Readable {
  const first = Math.floor(start / partSize);
  const last = Math.floor(end / partSize);
  const open = (index: number): Readable => {
    const base = index * partSize;
    const stream = storage.read(keys[index], Math.max(start - base, 0), Math.min(end - base, partSize - 1));
    // An error of a blob opened ahead surfaces when it is iterated; until then it must not be unhandled.
    stream.on('error', () => undefined);
    return stream;
  };
  if (first === last) return open(first);
  async function* concatenated(): AsyncGenerator<Buffer> {
    let current: Readable | undefined = open(first);
    let next: Readable | undefined;
    try {
      for (let index = first; index <= last; index++) {
        next = index < last ? open(index + 1) : undefined;
        yield* current as AsyncIterable<Buffer>;
        current = next;
        next = undefined;
      }
    } finally {
      // The consumer went away (or a blob failed): close whatever is still open.
      current?.destroy();
      next?.destroy();
    }
  }
  return Readable.from(concatenated(), { objectMode: false });
}
