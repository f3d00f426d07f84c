import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { BUILTIN_RESOURCES, RESOURCE_ACTIONS } from '../common/guard/access.js';
import { RED } from '../common/markings/tlp.js';
import { DEFAULT_RELIABILITY, reliabilityRank } from '../scoring/admiralty.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { generateKeyValue, hashKeyValue, keyPrefix } from './key-material.js';

/** decisions §1: the admin key holds every action on the four top-level resources. */
const ADMIN_PERMISSIONS = [BUILTIN_RESOURCES.auth, BUILTIN_RESOURCES.intel, BUILTIN_RESOURCES.insight, BUILTIN_RESOURCES.filebox].map((resource) => ({
  resourceId: resource.id,
  actions: [...RESOURCE_ACTIONS],
}));

/** Admin keys: the configured one, the first one of an empty database, and new ones made by an operator. */
@Injectable()
export class AdminKeysService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly keys: ApiKeyRepository,
  ) {}

  /** An admin key with exactly this value exists afterwards (idempotent). */
  async ensure(value: string): Promise<void> {
    await this.locked(async (manager) => {
      const keyHash = hashKeyValue(value);
      // No prefix: the operator chose this value (16 characters may be all it has), and its description names it.
      if (!(await this.keys.existsByHash(manager, keyHash))) await this.insert(manager, keyHash, null, 'admin (ADMIN_API_KEY)');
    });
  }

  /** When the database holds no key at all, creates an admin key and returns its value (shown once). */
  createIfNone(): Promise<string | undefined> {
    return this.locked(async (manager) => {
      if ((await this.keys.countKeys(manager)) > 0) return undefined;
      const value = generateKeyValue();
      await this.insert(manager, hashKeyValue(value), keyPrefix(value), 'admin (generated on first start)');
      return value;
    });
  }

  /** A new admin key whatever exists, e.g. to replace a lost one; its value is returned once, never stored. */
  create(description: string): Promise<{ id: number; key: string }> {
    return this.locked(async (manager) => {
      const key = generateKeyValue();
      return { id: await this.insert(manager, hashKeyValue(key), keyPrefix(key), description), key };
    });
  }

  private locked<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await this.keys.lockAdminKeys(manager);
      return work(manager);
    });
  }

  private insert(manager: EntityManager, keyHash: Buffer, prefix: string | null, description: string): Promise<number> {
    return this.keys.insert(manager, {
      keyHash,
      prefix,
      allowedNetworks: null,
      description,
      expiresAt: null,
      permissions: ADMIN_PERMISSIONS,
      limits: [],
      maxTlp: RED,
      reliability: reliabilityRank(DEFAULT_RELIABILITY),
    });
  }
}
