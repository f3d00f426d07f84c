import type { FileStorage, RangeReader } from './file-storage.js';

/**
 * Bytes `start..end` (inclusive) of content stored as the blobs `keys` in order, each `partSize` bytes but
 * the last: only the blobs the range touches are read, each only over its share of the range. The next
 * blob is opened as soon as the current one is first read, so that on S3 the request latency at a part
 * boundary overlaps the transfer of the part before it. Resolves once the first blob is open.
 */
export async function openParts(storage: FileStorage, keys: readonly string[], partSize: number, start: number, end: number): Promise<RangeReader> {
  const first = Math.floor(start / partSize);
  const last = Math.floor(end / partSize);
  const open = (index: number): Promise<RangeReader> => {
    const base = index * partSize;
    return storage.openRange(keys[index], Math.max(start - base, 0), Math.min(end - base, partSize - 1));
  };
  const current = await open(first);
  return first === last ? current : new PartsRange(open, first, last, current);
}

class PartsRange implements RangeReader {
  private next: Promise<RangeReader> | undefined;
  private closed = false;

  constructor(
    private readonly open: (index: number) => Promise<RangeReader>,
    private index: number,
    private readonly last: number,
    private current: RangeReader,
  ) {}

  async read(buffer: Buffer): Promise<number> {
    for (;;) {
      if (this.next === undefined && this.index < this.last) {
        this.next = this.open(this.index + 1);
        // A failure of the blob opened ahead surfaces when it is needed; until then it must not be unhandled.
        this.next.catch(() => undefined);
      }
      const count = await this.current.read(buffer);
      if (count > 0 || this.index === this.last || this.closed) return count;
      const next = this.next!;
      this.next = undefined;
      await this.current.close();
      this.current = await next;
      this.index++;
      // Closed while the next blob was opening: close() could not reach it.
      if (this.closed) {
        await this.current.close();
        return 0;
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const next = this.next;
    this.next = undefined;
    await Promise.all([
      this.current.close(),
      next?.then(
        (reader) => reader.close(),
        () => undefined,
      ),
    ]);
  }
}
