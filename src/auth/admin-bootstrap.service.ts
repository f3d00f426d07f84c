import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AdminKeysService } from './admin-keys.service.js';

/** `ADMIN_API_KEY` exists after start-up; without it, a database with no key gets one printed once. */
@Injectable()
export class AdminBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Bootstrap');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly adminKeys: AdminKeysService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.adminApiKey !== undefined) {
      await this.adminKeys.ensure(this.config.adminApiKey);
      return;
    }
    const generated = await this.adminKeys.createIfNone();
    if (generated !== undefined) {
      this.logger.log('No API key existed: generated an admin key. It is shown only this once:');
      process.stdout.write(`\n  ADMIN API KEY: ${generated}\n\n`);
    }
  }
}
