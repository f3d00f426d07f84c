import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthService } from '../../auth/auth.service.js';
import { ResourcesService } from '../../auth/resources.service.js';
import { ApiError, CommonErrors } from '../errors/api-error.js';
import { AccessRequest } from './access.js';
import { ACCESS_RULE, AccessRule } from './access.decorators.js';
import { requiredAccessOf } from './required-access.js';

/**
 * The one global guard: checks `X-Api-Version`, authenticates, and enforces the route's declared
 * `(resource, action)`. A route without a declaration is refused (fail closed).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger(ApiKeyGuard.name);

  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
    private readonly resources: ResourcesService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AccessRequest>();
    const version = request.headers['x-api-version'];
    if (version !== undefined && version !== '1') {
      throw CommonErrors.badRequest('unsupported X-Api-Version: only 1 is served');
    }
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!rule) {
      this.logger.error(`${context.getClass().name}.${context.getHandler().name} declares no access rule`);
      throw new ApiError('Forbidden', 'this operation is not available');
    }
    if (rule.kind === 'public') return true;

    const principal = await this.auth.authenticate(request.headers, rule.kind === 'api-key-only');
    request.principal = principal;
    if (rule.kind !== 'permission') return true;

    const resource = await requiredAccessOf(this.resources, principal, rule.resource, rule.action, request.params);
    if (!resource) return true;
    request.requiredAccess = { resource, action: rule.action };
    return true;
  }
}
