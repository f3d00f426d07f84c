import { Injectable } from '@nestjs/common';
import { InvalidationBus } from '../database/invalidation-bus.js';
import type { ApiKeyRecord } from './api-key.repository.js';

/** Invalidation topic of API keys; the key is the key id. */
export const KEY_TOPIC = 'key';
/** Defence in depth: even a trusted entry is re-read after this long. */
const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * API-key records of recent callers, so that an authenticated request needs no key lookup. Keys change only
 * by revocation, which notifies every instance through the InvalidationBus in the revoking transaction (and
 * evicts on the revoking instance before it answers); entries are served only while the bus is trusted.
 * Expiry is checked on every request from the record itself.
 */
@Injectable()
export class ApiKeyCache {
  private readonly records = new Map<number, { record: ApiKeyRecord; cachedAt: number }>();
  private readonly idByHash = new Map<string, number>();

  constructor(private readonly bus: InvalidationBus) {
    bus.register(KEY_TOPIC, {
      invalidate: (id) => this.evict(Number(id)),
      reset: () => {
        this.records.clear();
        this.idByHash.clear();
      },
    });
  }

  byHash(keyHash: Buffer, load: () => Promise<ApiKeyRecord | undefined>): Promise<ApiKeyRecord | undefined> {
    return this.through(this.idByHash.get(keyHash.toString('hex')), load, keyHash);
  }

  byId(id: number, load: () => Promise<ApiKeyRecord | undefined>): Promise<ApiKeyRecord | undefined> {
    return this.through(id, load);
  }

  private async through(
    id: number | undefined,
    load: () => Promise<ApiKeyRecord | undefined>,
    keyHash?: Buffer,
  ): Promise<ApiKeyRecord | undefined> {
    const entry = id === undefined ? undefined : this.records.get(id);
    if (entry && this.bus.trusted && Date.now() - entry.cachedAt < MAX_AGE_MS) return entry.record;
    const epoch = this.bus.currentEpoch;
    const record = await load();
    // Only what no invalidation can have overtaken while it was being read is kept.
    if (record && this.bus.stillCurrent(epoch)) this.store(record, keyHash);
    return record;
  }

  private store(record: ApiKeyRecord, keyHash?: Buffer): void {
    if (this.records.size >= MAX_ENTRIES) this.evict(this.records.keys().next().value as number);
    this.records.set(record.id, { record, cachedAt: Date.now() });
    if (keyHash) this.idByHash.set(keyHash.toString('hex'), record.id);
  }

  private evict(id: number): void {
    this.records.delete(id);
    for (const [hash, cachedId] of this.idByHash) if (cachedId === id) this.idByHash.delete(hash);
  }
}
