import type { InvalidationBus } from './invalidation-bus.js';

/** While the LISTEN connection is down a waiter re-checks this often, since a wake-up may be missed. */
const UNTRUSTED_RECHECK_MS = 1000;

/** How a wait ended. */
type WakeReason = 'signalled' | 'timeout' | 'gone' | 'closing';

/** One armed waiter: signalled at most once; `until` resolves at the first of signal, time-out, abort, close. */
class Waiter {
  private signalled = false;
  private settle?: (reason: WakeReason) => void;

  constructor(private readonly release: (waiter: Waiter) => void) {}

  signal(reason: WakeReason = 'signalled'): void {
    if (this.settle) this.settle(reason);
    else this.signalled = true;
  }

  until(ms: number, gone: AbortSignal | undefined): Promise<WakeReason> {
    if (this.signalled) {
      this.release(this);
      return Promise.resolve('signalled');
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle?.('timeout'), ms);
      const onAbort = () => this.settle?.('gone');
      gone?.addEventListener('abort', onAbort, { once: true });
      this.settle = (reason) => {
        this.settle = undefined;
        clearTimeout(timer);
        gone?.removeEventListener('abort', onAbort);
        this.release(this);
        resolve(reason);
      };
    });
  }

  /** Disarms a waiter that will not wait (the check had an answer or failed). */
  cancel(): void {
    this.release(this);
  }
}

export interface LongPollOptions<Result> {
  /** Seconds to hold the request while `ready` is false; 0 answers the first check as it is. */
  waitSeconds: number;
  /** Aborts when the client has gone: the wait ends at once and nothing more is read. */
  gone?: AbortSignal;
  /** Whether the result is worth answering now (a non-empty page, a finished task, ...). */
  ready: (result: Result) => boolean;
  /** A moment (epoch ms) at which the result may change without any commit (a lease running out). */
  changesAt?: (result: Result) => number | undefined;
}

/**
 * Long-polls over the invalidation bus: a request whose answer is empty waits until a commit on any
 * instance signals `topic:key`, its time runs out, its client goes away or the application shuts down.
 *
 * A waiter is a promise and a timer: it holds no database connection and runs no query while it waits;
 * it reads again only when signalled. It is armed before each check, so a commit that lands after the
 * check's snapshot but before the waiter sleeps still wakes it. When the wait ends without an answer the
 * last check's result is sent: an empty page, an empty queue, a pending task.
 */
export class LongPoll {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private closing = false;

  constructor(
    private readonly bus: InvalidationBus,
    private readonly topic: string,
  ) {
    bus.register(topic, {
      wakeOnly: true,
      invalidate: (key) => this.wake(key),
      reset: () => this.wakeAll('signalled'),
      close: () => {
        this.closing = true;
        this.wakeAll('closing');
      },
      waiting: () => {
        let count = 0;
        for (const set of this.waiters.values()) count += set.size;
        return count;
      },
    });
  }

  /** After a commit: wakes the waiters of `key` on every instance. */
  signal(key: string): void {
    this.bus.signal(this.topic, key);
  }

  async poll<Result>(key: string, options: LongPollOptions<Result>, check: () => Promise<Result>): Promise<Result> {
    if (options.waitSeconds === 0) return check();
    const deadline = Date.now() + options.waitSeconds * 1000;
    for (;;) {
      const waiter = this.arm(key);
      let result: Result;
      try {
        result = await check();
      } catch (error) {
        waiter.cancel();
        throw error;
      }
      const now = Date.now();
      if (options.ready(result) || now >= deadline || this.closing || options.gone?.aborted) {
        waiter.cancel();
        return result;
      }
      let sleep = deadline - now;
      if (!this.bus.trusted) sleep = Math.min(sleep, UNTRUSTED_RECHECK_MS);
      const changesAt = options.changesAt?.(result);
      if (changesAt !== undefined) sleep = Math.min(sleep, Math.max(0, changesAt - now));
      const reason = await waiter.until(sleep, options.gone);
      if (reason === 'gone' || reason === 'closing') return result;
    }
  }

  private arm(key: string): Waiter {
    let set = this.waiters.get(key);
    if (!set) this.waiters.set(key, (set = new Set()));
    const waiter = new Waiter((done) => {
      set.delete(done);
      if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
    });
    set.add(waiter);
    return waiter;
  }

  private wake(key: string): void {
    for (const waiter of [...(this.waiters.get(key) ?? [])]) waiter.signal();
  }

  private wakeAll(reason: WakeReason): void {
    for (const set of [...this.waiters.values()]) for (const waiter of [...set]) waiter.signal(reason);
  }
}
