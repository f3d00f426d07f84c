import type { ServerResponse } from 'node:http';
import type { BufferPool } from './storage/buffer-pool.js';
import type { RangeReader } from './storage/file-storage.js';

/** Chunks of one download in flight at a time: one being read while the socket sends the others. */
const RING = 4;

/**
 * Sends everything `reader` yields as the body of `response` (headers already set), then ends it. The
 * chunks go from storage into a small ring of pooled buffers and from there to the socket: a buffer is
 * taken again only after the socket's write callback for it fired, so the ring is also the backpressure
 * (at most `RING` chunks per download in memory) and a download allocates nothing per chunk. A fresh
 * Buffer per chunk (what a read stream does) is external memory that outlives scavenges when the socket
 * is slow, and it drove the service into a full GC every 60–80 ms in bench row 8 (BENCHMARKS.md).
 *
 * The reader is closed in every case; a client that goes away closes it at once, even mid-read. Resolves
 * when the response is finished or the client is gone; rejects with a storage error (the response is then
 * cut short by the caller).
 */
export async function sendRange(reader: RangeReader, response: ServerResponse, buffers: BufferPool, sent: (bytes: number) => void): Promise<void> {
  let inFlight = 0;
  let gone = false;
  let wake: (() => void) | undefined;
  const signal = () => {
    const resume = wake;
    wake = undefined;
    resume?.();
  };
  const onClose = () => {
    // 'close' also follows a normal finish; only before it does it mean the client left.
    if (response.writableFinished) return;
    gone = true;
    reader.close().catch(() => undefined);
    signal();
  };
  response.on('close', onClose);
  try {
    for (;;) {
      while (inFlight === RING && !gone) await new Promise<void>((resolve) => (wake = resolve));
      // Destroyed: its 'close' is still to come (next tick), and nothing written now would be sent.
      if (gone || response.destroyed) return;
      const buffer = buffers.take();
      let count: number;
      try {
        count = await reader.read(buffer);
      } catch (error) {
        buffers.give(buffer);
        if (gone) return;
        throw error;
      }
      if (gone || count === 0) {
        buffers.give(buffer);
        if (gone) return;
        break;
      }
      inFlight++;
      sent(count);
      response.write(count === buffer.length ? buffer : buffer.subarray(0, count), (error) => {
        inFlight--;
        // A failed write may leave the buffer referenced by a socket being torn down: never reused.
        if (!error) buffers.give(buffer);
        signal();
      });
    }
    await new Promise<void>((resolve) => {
      response.end(resolve);
      response.once('close', resolve);
    });
  } finally {
    response.off('close', onClose);
    await reader.close();
  }
}
