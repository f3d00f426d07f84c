import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BUILTIN_RESOURCES, RESOURCE_ACTIONS } from '../common/guard/access.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { generateKeyValue, hashKeyValue } from './key-material.js';

const BOOTSTRAP_LOCK = 7_240_001;

/** decisions §1: the admin key holds every action on the four top-level resources. */
const ADMIN_PERMISSIONS = [
  BUILTIN_RESOURCES.auth,
  BUILTIN_RESOURCES.intel,
  BUILTIN_RESOURCES.insight,
  BUILTIN_RESOURCES.filebox,
].map((resource) => ({ resourceId: resource.id, actions: [...RESOURCE_ACTIONS] }));

/** `ADMIN_API_KEY` exists after start-up; without it, a database with no key gets one printed once. */
@Injectable()
export class AdminBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Bootstrap');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: ApiKeyRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const generated = await this.dataSource.transaction(async (manager) => {
      // Instances starting together must not both create the first key.
      await manager.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK]);
      const configured = this.config.adminApiKey;
      if (configured !== undefined) {
        const keyHash = hashKeyValue(configured);
        if (!(await this.keys.existsByHash(manager, keyHash))) {
          await this.keys.insert(manager, {
            keyHash,
            description: 'admin (ADMIN_API_KEY)',
            expiresAt: null,
            permissions: ADMIN_PERMISSIONS,
            limits: [],
          });
        }
        return undefined;
      }
      if ((await this.keys.countKeys(manager)) > 0) return undefined;
      const value = generateKeyValue();
      await this.keys.insert(manager, {
        keyHash: hashKeyValue(value),
        description: 'admin (generated on first start)',
        expiresAt: null,
        permissions: ADMIN_PERMISSIONS,
        limits: [],
      });
      return value;
    });
    if (generated !== undefined) {
      this.logger.log('No API key existed: generated an admin key. It is shown only this once:');
      process.stdout.write(`\n  ADMIN API KEY: ${generated}\n\n`);
    }
  }
}
