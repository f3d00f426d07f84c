import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { AuthService } from '../auth/auth.service.js';
import { ResourcesService } from '../auth/resources.service.js';
import { ApiError, CommonErrors } from '../common/errors/api-error.js';
import { ACCESS_RULE, AccessRule, BASIC_REALM } from '../common/guard/access.decorators.js';
import { AccessRequest } from '../common/guard/access.js';
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
    private readonly moduleRef: ModuleRef,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AccessRequest>();
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [context.getHandler(), context.getClass()]);
    request.accessRule = rule;
    const version = request.headers['x-api-version'];
    if (version !== undefined && version !== '1') {
      throw CommonErrors.badRequest('unsupported X-Api-Version: only 1 is served');
    }
    if (!rule) {
      this.logger.error(`${context.getClass().name}.${context.getHandler().name} declares no access rule`);
      throw new ApiError('Forbidden', 'this operation is not available');
    }
    if (rule.kind === 'public') return true;

    const realm = this.reflector.getAllAndOverride<string | undefined>(BASIC_REALM, [context.getHandler(), context.getClass()]);
    const schemes = rule.kind === 'api-key-only' ? 'api-key-only' : realm ? 'with-basic' : 'standard';
    const principal = await this.auth.authenticate(request.headers, request.ip, schemes).catch((error: unknown) => {
      throw realm && error instanceof ApiError && error.code === 'Unauthorized' ? askForBasic(error, realm) : error;
    });
    request.principal = principal;
    if (rule.kind !== 'permission') return true;

    const resource = await requiredAccessOf(this.resources, principal, rule.resource, rule.action, request.params, (type) =>
      this.moduleRef.get(type, { strict: false }),
    );
    if (!resource) return true;
    request.requiredAccess = { resource, action: rule.action };
    return true;
  }
}

/** The 401 of a route that takes Basic credentials names the scheme and realm (RFC 7235 §4.1, RFC 7617). */
function askForBasic(error: ApiError, realm: string): ApiError {
  return new ApiError(error.code, error.message, error.details, {
    ...error.headers,
    'WWW-Authenticate': `Basic realm="${realm}", charset="UTF-8"`,
  });
}
