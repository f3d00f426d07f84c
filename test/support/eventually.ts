import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** How long to keep trying before failing: generous, since the whole suite shares two cores. */
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `check` until it holds, for waiting on work another instance or a background job does (never a
 * timing assertion): it holds when it returns anything but `false` without throwing, so it may be a
 * predicate or a block of `expect`s. Resolves with what it returned; past the deadline it throws, with the
 * last failure (the assertion's own message), so a test fails here and says why.
 */
export async function eventually<T>(check: () => T | Promise<T>, { timeoutMs = 20_000, intervalMs = 20 }: EventuallyOptions = {}): Promise<Exclude<T, false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let failure: unknown;
    try {
      const value = await check();
      if (value !== false) return value as Exclude<T, false>;
      failure = new Error(`the condition ${check.toString()} still returns false`);
    } catch (error) {
      failure = error;
    }
    if (Date.now() >= deadline) {
      const reason = failure instanceof Error ? failure.message : String(failure);
      throw new Error(`eventually: still failing after ${timeoutMs} ms: ${reason}`, { cause: failure });
    }
    await sleep(intervalMs);
  }
}
