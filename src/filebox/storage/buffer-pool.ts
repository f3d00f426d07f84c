/**
 * Buffers of one size, reused across requests (upload parts, download chunks). A buffer that lives as
 * long as the service replaces a fresh Buffer per chunk or part: those are external memory that only a
 * full GC frees, and under load they pile up (bench rows 7a and 8 in BENCHMARKS.md).
 */
export class BufferPool {
  private readonly idle: Buffer[] = [];

  /** `keep`: idle buffers kept for later; more concurrent users allocate more, freed after. */
  constructor(
    readonly bytes: number,
    private readonly keep: number,
  ) {}

  take(): Buffer {
    return this.idle.pop() ?? Buffer.allocUnsafeSlow(this.bytes);
  }

  /** Only a buffer nothing else references any more (a socket may still hold one whose write failed). */
  give(buffer: Buffer): void {
    if (this.idle.length < this.keep) this.idle.push(buffer);
  }
}
