import type { EntityManager } from 'typeorm';
import type { InvalidationBus } from './invalidation-bus.js';

/** Defence in depth: even a trusted entry is re-read after this long. */
const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * A process cache of database rows that never outlives a committed change made through any instance.
 * Writers call `publish` inside their transaction and `evictLocally` after it commits; every instance
 * evicts when the notification arrives. Entries are served only while the bus is trusted, and a value
 * read while an invalidation happened is not stored. Absent rows are never cached.
 */
export class InvalidatedCache<Value> {
  private readonly entries = new Map<string, { value: Value; cachedAt: number }>();
  private readonly lookups: ReturnType<InvalidationBus['lookupCounters']>;

  constructor(
    private readonly bus: InvalidationBus,
    private readonly topic: string,
  ) {
    this.lookups = bus.lookupCounters(topic);
    bus.register(topic, {
      invalidate: (key) => this.entries.delete(key),
      reset: () => this.entries.clear(),
    });
  }

  async get(key: string, load: () => Promise<Value | undefined>): Promise<Value | undefined> {
    const entry = this.entries.get(key);
    if (entry && this.bus.trusted && Date.now() - entry.cachedAt < MAX_AGE_MS) {
      this.lookups.hit.inc();
      return entry.value;
    }
    this.lookups.miss.inc();
    const epoch = this.bus.currentEpoch;
    const value = await load();
    if (value !== undefined && this.bus.stillCurrent(epoch)) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, { value, cachedAt: Date.now() });
    }
    return value;
  }

  /** Inside the writing transaction: every instance drops `key` when it commits. */
  publish(manager: EntityManager, key: string): Promise<void> {
    return this.bus.publish(manager, this.topic, key);
  }

  /** After the commit, before answering: this instance drops `key` at once. */
  evictLocally(key: string): void {
    this.bus.invalidateLocally(this.topic, key);
  }
}
