import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminBootstrapService } from './admin-bootstrap.service.js';
import { AdminKeysService } from './admin-keys.service.js';
import { ApiKeyCache } from './api-key-cache.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysService } from './api-keys.service.js';
import { AuthService } from './auth.service.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';
import { PermissionEntity } from './entities/permission.entity.js';
import { RequestCountEntity } from './entities/request-count.entity.js';
import { RequestLimitEntity } from './entities/request-limit.entity.js';
import { ResourceEntity } from './entities/resource.entity.js';
import { TokenSecretEntity } from './entities/token-secret.entity.js';
import { RequestCountsRepository } from './request-counts.repository.js';
import { RequestLimitsService } from './request-limits.service.js';
import { ResourcesController } from './resources.controller.js';
import { ResourcesRepository } from './resources.repository.js';
import { ResourcesService } from './resources.service.js';
import { TokenSecretRepository } from './token-secret.repository.js';
import { TokensController } from './tokens.controller.js';
import { TokensService } from './tokens.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKeyEntity, PermissionEntity, RequestLimitEntity, RequestCountEntity, ResourceEntity, TokenSecretEntity])],
  controllers: [ApiKeysController, ResourcesController, TokensController],
  providers: [
    ApiKeyRepository,
    ApiKeyCache,
    ApiKeysService,
    AuthService,
    TokenSecretRepository,
    TokensService,
    ResourcesRepository,
    ResourcesService,
    RequestCountsRepository,
    RequestLimitsService,
    AdminKeysService,
    AdminBootstrapService,
  ],
  // The guard and the rate-limit interceptor use the first three; intel uses ResourcesService for collections;
  // the admin CLI (src/admin) uses AdminKeysService; the web console (src/console) ApiKeysService.
  exports: [AuthService, ResourcesService, RequestLimitsService, AdminKeysService, ApiKeysService],
})
export class AuthModule {}
