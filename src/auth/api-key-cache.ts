import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { InvalidatedCache } from '../database/invalidated-cache.js';
import { InvalidationBus } from '../database/invalidation-bus.js';
import type { ApiKeyRecord } from './api-key.repository.js';

const MAX_HASHES = 10_000;

/**
 * API-key records of recent callers, so that an authenticated request needs no key lookup. What a request
 * reads of a key changes only by revocation or new settings (`maxTLP`, `reliability`), each of which invalidates it on
 * every instance (see InvalidatedCache); expiry is checked on every request from the record itself. The
 * hash → id mapping never changes, so it needs no invalidation.
 */
@Injectable()
export class ApiKeyCache {
  private readonly records: InvalidatedCache<ApiKeyRecord>;
  private readonly idByHash = new Map<string, number>();

  constructor(bus: InvalidationBus) {
    this.records = new InvalidatedCache(bus, 'key');
  }

  async byHash(keyHash: Buffer, load: () => Promise<ApiKeyRecord | undefined>): Promise<ApiKeyRecord | undefined> {
    const hash = keyHash.toString('hex');
    const id = this.idByHash.get(hash);
    if (id !== undefined) return this.records.get(String(id), load);
    const record = await load();
    if (record) {
      if (this.idByHash.size >= MAX_HASHES) this.idByHash.clear();
      this.idByHash.set(hash, record.id);
    }
    return record;
  }

  byId(id: number, load: () => Promise<ApiKeyRecord | undefined>): Promise<ApiKeyRecord | undefined> {
    return this.records.get(String(id), load);
  }

  /** Inside the transaction that revokes the key or changes its settings. */
  publishChange(manager: EntityManager, id: number): Promise<void> {
    return this.records.publish(manager, String(id));
  }

  /** After that change commits, before answering. */
  evictLocally(id: number): void {
    this.records.evictLocally(String(id));
  }
}
