import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const KIB_PER_MIB = 1024;

let clockTicks: number | undefined;
/** Kernel clock ticks per second (the unit of /proc/<pid>/stat CPU times). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** Reads a process's memory and CPU figures from /proc (Linux). */
export class ProcessProbe {
  constructor(readonly pid: number) {}

  /** Current resident set (VmRSS) and peak resident set since the last reset (VmHWM), in KiB. */
  memory(): { rssKiB: number; hwmKiB: number } | undefined {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
      const hwm = /^VmHWM:\s+(\d+) kB/m.exec(status);
      if (!rss || !hwm) return undefined;
      return { rssKiB: Number(rss[1]), hwmKiB: Number(hwm[1]) };
    } catch {
      return undefined;
    }
  }

  /** User + system CPU seconds the process has used so far. */
  cpuSeconds(): number | undefined {
    try {
      const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
    } catch {
      return undefined;
    }
  }

  /** Resets VmHWM to the current RSS (`echo 5 > clear_refs`); false where the kernel refuses. */
  resetPeak(): boolean {
    try {
      writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
      return true;
    } catch {
      return false;
    }
  }
}

export interface MemoryFigures {
  /** RSS just before the window opened. */
  rssBeforeMiB: number;
  /** Highest RSS inside the window: the kernel's VmHWM (reset at the start) or the highest sample. */
  peakRssMiB: number;
  /** peak − before. */
  growthMiB: number;
  /** CPU seconds the process used inside the window. */
  cpuSeconds: number;
}

/**
 * Watches one process over a window: resets its peak RSS at the start, samples VmRSS every 25 ms as a
 * fallback (and cross-check) for kernels that do not allow the reset, and reports peak and growth.
 */
export class MemoryWindow {
  private before = 0;
  private peak = 0;
  private cpuBefore = 0;
  private usedKernelPeak = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly probe: ProcessProbe) {}

  start(): this {
    const now = this.probe.memory();
    this.before = now?.rssKiB ?? 0;
    this.peak = this.before;
    this.usedKernelPeak = this.probe.resetPeak();
    this.cpuBefore = this.probe.cpuSeconds() ?? 0;
    this.timer = setInterval(() => this.sample(), 25);
    this.timer.unref();
    return this;
  }

  private sample(): void {
    const now = this.probe.memory();
    if (now) this.peak = Math.max(this.peak, now.rssKiB);
  }

  stop(): MemoryFigures {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    const now = this.probe.memory();
    if (now && this.usedKernelPeak) this.peak = Math.max(this.peak, now.hwmKiB);
    const cpu = (this.probe.cpuSeconds() ?? this.cpuBefore) - this.cpuBefore;
    return {
      rssBeforeMiB: this.before / KIB_PER_MIB,
      peakRssMiB: this.peak / KIB_PER_MIB,
      growthMiB: (this.peak - this.before) / KIB_PER_MIB,
      cpuSeconds: cpu,
    };
  }
}
