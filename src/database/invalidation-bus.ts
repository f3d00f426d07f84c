import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { Gauge, type Counter } from 'prom-client';
import type { DataSource, EntityManager } from 'typeorm';
import { Metrics } from '../common/metrics/metrics.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

const CHANNEL = 'ids_invalidation';
const RECONNECT_DELAY_MS = 1000;
/**
 * How long a wake-up for the other instances waits for more to go with it. Sent on the next turn instead, a
 * busy queue sent one NOTIFY per two task completions (BENCHMARKS.md, row 6), each a round trip that costs the
 * service about as much CPU as the completion's own statement. Waiters on other instances hear of a commit
 * this much later; those on this instance are woken at once, as before.
 */
const WAKE_UP_BATCH_MS = 5;

export interface InvalidationListener {
  /** A committed change made `key` stale on some instance (this one included). */
  invalidate(key: string): void;
  /** Notifications may have been missed: drop everything. */
  reset(): void;
  /** The application is shutting down: no notification will follow. */
  close?(): void;
  /** Requests held waiting for this topic (long-polls). */
  waiting?(): number;
  /** The topic only wakes waiters (long-polls): its notifications make no cached value stale. */
  wakeOnly?: boolean;
}

/**
 * The one cross-instance notification channel, over PostgreSQL LISTEN/NOTIFY on one dedicated connection
 * per instance. It carries two kinds of `topic:key` messages:
 *
 * - cache invalidations (InvalidatedCache), sent inside the writing transaction (`publish(manager, ...)`),
 *   so they are delivered exactly when the change commits. Caches may serve entries only while `trusted`
 *   is true: the LISTEN connection is up. When it drops, every listener is reset and caching pauses until
 *   LISTEN is established again, so a missed notification can never leave a stale entry behind.
 * - wake-ups of long-polls (LongPoll), sent after the commit (`signal`): applied on this instance at once and
 *   sent to the others on the LISTEN connection itself, coalesced over a few milliseconds, so a write pays no extra round trip in
 *   its transaction, and committing writers of different collections do not serialise on PostgreSQL's
 *   notification queue lock (held from NOTIFY to the end of the commit). A wake-up lost with a crashed
 *   instance only delays a waiter until its deadline, when it answers from a fresh read anyway.
 */
@Injectable()
export class InvalidationBus implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(InvalidationBus.name);
  private readonly listeners = new Map<string, InvalidationListener>();
  private client?: pg.Client;
  private listening = false;
  private closing = false;
  private reconnectTimer?: NodeJS.Timeout;
  /** Bumped on every invalidation and reset: a cache fill that started before a bump must not be stored. */
  private epoch = 0;
  /** Wake-ups waiting to be sent to the other instances (`topic:key`); sent together after WAKE_UP_BATCH_MS. */
  private readonly outgoing = new Set<string>();
  private flushing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly metrics: Metrics,
  ) {
    const waiters = () => this.waiters;
    // Read at scrape time from the long-polls themselves: nothing to keep in step on the request path.
    new Gauge({
      name: 'ids_longpoll_waiters',
      help: 'Long-poll requests currently waiting',
      registers: [metrics.registry],
      collect() {
        this.set(waiters());
      },
    });
  }

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    for (const listener of this.listeners.values()) listener.close?.();
    clearTimeout(this.reconnectTimer);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
  }

  /** True while no notification can have been missed. */
  get trusted(): boolean {
    return this.listening;
  }

  /** The current epoch; pass it to `stillCurrent` after loading what is to be cached. */
  get currentEpoch(): number {
    return this.epoch;
  }

  /** Whether a value loaded when the epoch was `epoch` may be cached (nothing was invalidated meanwhile). */
  stillCurrent(epoch: number): boolean {
    return this.listening && epoch === this.epoch;
  }

  /** Long-polling requests held right now, all topics. */
  get waiters(): number {
    let count = 0;
    for (const listener of this.listeners.values()) count += listener.waiting?.() ?? 0;
    return count;
  }

  /** Listens for invalidations of keys `<topic>:...`. One listener per topic. */
  register(topic: string, listener: InvalidationListener): void {
    this.listeners.set(topic, listener);
  }

  /** The hit and miss counters of the cache on `topic` (`ids_cache_lookups_total`). */
  lookupCounters(topic: string): { hit: Counter.Internal; miss: Counter.Internal } {
    return { hit: this.metrics.cacheLookups.labels(topic, 'hit'), miss: this.metrics.cacheLookups.labels(topic, 'miss') };
  }

  /** Announces, inside the writing transaction, that `topic:key` (each of `keys`) changes when it commits. */
  async publish(manager: EntityManager, topic: string, keys: string | string[]): Promise<void> {
    const payloads = (Array.isArray(keys) ? keys : [keys]).map((key) => `${topic}:${key}`);
    await manager.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [CHANNEL, payloads]);
  }

  /** Applies an invalidation on this instance at once (before its own notification comes back). */
  invalidateLocally(topic: string, key: string): void {
    const listener = this.listeners.get(topic);
    // A wake-up (a feed numbered, a task registered) leaves cache fills in progress valid.
    if (!listener?.wakeOnly) this.epoch++;
    listener?.invalidate(key);
  }

  /**
   * After a commit: `topic:key` changed. Listeners on this instance hear it now; the other instances as soon
   * as the LISTEN connection can send it (or, while it is down, a pooled one).
   */
  signal(topic: string, key: string): void {
    this.listeners.get(topic)?.invalidate(key);
    this.outgoing.add(`${topic}:${key}`);
    if (!this.flushing) {
      this.flushing = true;
      setTimeout(() => void this.flush(), WAKE_UP_BATCH_MS).unref();
    }
  }

  private async flush(): Promise<void> {
    while (this.outgoing.size > 0 && !this.closing) {
      const payloads = [...this.outgoing];
      this.outgoing.clear();
      const sql = 'SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p';
      try {
        if (this.listening && this.client) await this.client.query(sql, [CHANNEL, payloads]);
        else await this.dataSource.query(sql, [CHANNEL, payloads]);
      } catch (error) {
        this.logger.warn(`wake-ups not sent to other instances: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.flushing = false;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.config.databaseUrl, application_name: 'ids-invalidation' });
    client.on('notification', (message) => {
      // Our own wake-ups, sent on this very connection, were applied when signalled.
      if (message.processId === backendPid) return;
      const payload = message.payload ?? '';
      const split = payload.indexOf(':');
      if (split > 0) this.invalidateLocally(payload.slice(0, split), payload.slice(split + 1));
    });
    let backendPid: number | undefined;
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    this.client = client;
    try {
      await client.connect();
      backendPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await client.query(`LISTEN ${CHANNEL}`);
      this.listening = true;
    } catch (error) {
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error?: unknown): void {
    if (client !== this.client) return;
    const wasListening = this.listening;
    this.listening = false;
    this.epoch++;
    for (const listener of this.listeners.values()) listener.reset();
    if (this.closing) return;
    if (wasListening) {
      this.logger.warn(`invalidation listener lost (${error instanceof Error ? error.message : 'closed'}); caches paused`);
    }
    this.client = undefined;
    client.removeAllListeners();
    void client.end().catch(() => undefined);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.connect(), RECONNECT_DELAY_MS);
    this.reconnectTimer.unref();
  }
}
