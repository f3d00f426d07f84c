/**
 * Exact latency percentiles from every recorded sample (milliseconds, sub-millisecond resolution).
 * autocannon's own histogram records whole milliseconds, which cannot tell 0.3 ms from 0.9 ms on the
 * cheap rows, so the bench keeps the raw samples instead (a few MB for a million requests).
 */
export class LatencyRecorder {
  private samples = new Float64Array(1 << 14);
  private size = 0;

  record(ms: number): void {
    if (this.size === this.samples.length) {
      const grown = new Float64Array(this.samples.length * 2);
      grown.set(this.samples);
      this.samples = grown;
    }
    this.samples[this.size++] = ms;
  }

  merge(other: LatencyRecorder): void {
    for (let i = 0; i < other.size; i++) this.record(other.samples[i]);
  }

  get count(): number {
    return this.size;
  }

  /** Nearest-rank percentile, `p` in 0..100; undefined when nothing was recorded. */
  percentile(p: number): number | undefined {
    if (this.size === 0) return undefined;
    const sorted = this.samples.slice(0, this.size).sort();
    const rank = Math.min(this.size - 1, Math.max(0, Math.ceil((p / 100) * this.size) - 1));
    return sorted[rank];
  }
}
