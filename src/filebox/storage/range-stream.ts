import { Readable } from 'node:stream';
import type { RangeReader } from './file-storage.js';

const CHUNK_BYTES = 1024 * 1024;

/**
 * A range as a stream, for consumers that are not a download (hashing a completed session's parts): a
 * fresh buffer per chunk, since its consumer may keep it. Destroying the stream closes the reader.
 */
export function rangeStream(opening: Promise<RangeReader>): Readable {
  let reader: RangeReader | undefined;
  // Its failure is the stream's (see construct), never an unhandled rejection meanwhile.
  opening.catch(() => undefined);
  return new Readable({
    highWaterMark: CHUNK_BYTES,
    construct(callback) {
      opening.then(
        (opened) => {
          reader = opened;
          callback();
        },
        (error: Error) => callback(error),
      );
    },
    read() {
      const buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES);
      reader!.read(buffer).then(
        (count) => this.push(count === 0 ? null : buffer.subarray(0, count)),
        (error: Error) => this.destroy(error),
      );
    },
    destroy(error, callback) {
      const closing = reader
        ? reader.close()
        : opening.then(
            (opened) => opened.close(),
            () => undefined,
          );
      closing.then(
        () => callback(error),
        () => callback(error),
      );
    },
  });
}
