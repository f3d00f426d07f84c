import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import type { Counter } from 'prom-client';
import type { EntityManager } from 'typeorm';
import { Metrics } from '../common/metrics/metrics.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

const CHANNEL = 'ids_invalidation';
const RECONNECT_DELAY_MS = 1000;

export interface InvalidationListener {
  /** A committed change made `key` stale on some instance (this one included). */
  invalidate(key: string): void;
  /** Notifications may have been missed: drop everything. */
  reset(): void;
}

/**
 * Cross-instance cache invalidation over PostgreSQL LISTEN/NOTIFY, so that process caches never outlive a
 * change made through any instance.
 *
 * Notifications are sent inside the writing transaction (`publish(manager, ...)`), so they are delivered
 * exactly when the change commits. Caches may serve entries only while `trusted` is true: the LISTEN
 * connection is up. When it drops, every listener is reset and caching pauses until LISTEN is established
 * again, so a missed notification can never leave a stale entry behind.
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

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
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

  /** Listens for invalidations of keys `<topic>:...`. One listener per topic. */
  register(topic: string, listener: InvalidationListener): void {
    this.listeners.set(topic, listener);
  }

  /** The hit and miss counters of the cache on `topic` (`ids_cache_lookups_total`). */
  lookupCounters(topic: string): { hit: Counter.Internal; miss: Counter.Internal } {
    return { hit: this.metrics.cacheLookups.labels(topic, 'hit'), miss: this.metrics.cacheLookups.labels(topic, 'miss') };
  }

  /** Announces, inside the writing transaction, that `topic:key` changes when it commits. */
  async publish(manager: EntityManager, topic: string, key: string): Promise<void> {
    await manager.query('SELECT pg_notify($1, $2)', [CHANNEL, `${topic}:${key}`]);
  }

  /** Applies an invalidation on this instance at once (before its own notification comes back). */
  invalidateLocally(topic: string, key: string): void {
    this.epoch++;
    this.listeners.get(topic)?.invalidate(key);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.config.databaseUrl, application_name: 'ids-invalidation' });
    client.on('notification', (message) => {
      const payload = message.payload ?? '';
      const split = payload.indexOf(':');
      if (split > 0) this.invalidateLocally(payload.slice(0, split), payload.slice(split + 1));
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    this.client = client;
    try {
      await client.connect();
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
