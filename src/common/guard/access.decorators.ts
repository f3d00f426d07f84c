import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { ApiError } from '../errors/api-error.js';
import type { AccessRequest, BuiltinResource, Principal as PrincipalType, RouteAction } from './access.js';

export const ACCESS_RULE = 'access-rule';

/** A resource fixed by name, or a child of a built-in resource named by a path parameter (a collection). */
export type ResourceRef = BuiltinResource | { parent: BuiltinResource; param: string };

export type AccessRule =
  | { kind: 'public' }
  | { kind: 'api-key-only' }
  | { kind: 'authenticated' }
  | { kind: 'permission'; resource: ResourceRef; action: RouteAction };

/** No credentials needed (health, OpenAPI). Every route must opt out explicitly: the guard fails closed. */
export const Public = () => SetMetadata(ACCESS_RULE, { kind: 'public' } satisfies AccessRule);

/** Only an `X-Api-Key` is accepted (the token endpoint). */
export const ApiKeyOnly = () =>
  applyDecorators(SetMetadata(ACCESS_RULE, { kind: 'api-key-only' } satisfies AccessRule), ApiSecurity('apiKey'));

/** Any valid credentials; the service filters what the caller may see (the collection listing). */
export const Authenticated = () =>
  applyDecorators(
    SetMetadata(ACCESS_RULE, { kind: 'authenticated' } satisfies AccessRule),
    ApiBearerAuth(),
    ApiSecurity('apiKey'),
  );

/** The route requires `action` on `resource` (decisions §3 rule, including `*Children` on the direct parent). */
export const RequirePermission = (resource: ResourceRef, action: RouteAction) =>
  applyDecorators(
    SetMetadata(ACCESS_RULE, { kind: 'permission', resource, action } satisfies AccessRule),
    ApiBearerAuth(),
    ApiSecurity('apiKey'),
  );

/** `@Principal() principal: Principal`: the authenticated key. */
export const Principal = createParamDecorator((_data: unknown, context: ExecutionContext): PrincipalType => {
  const principal = context.switchToHttp().getRequest<AccessRequest>().principal;
  if (!principal) throw new ApiError('Unauthorized', 'valid credentials are required');
  return principal;
});
