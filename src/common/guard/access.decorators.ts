import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBasicAuth, ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { ApiError } from '../errors/api-error.js';
import { ApiErrors } from '../http/api-errors.decorator.js';
import { BUILTIN_RESOURCES, childrenActionOf, type AccessRequest, type BuiltinResource, type Principal as PrincipalType, type RouteAction } from './access.js';

export const ACCESS_RULE = 'access-rule';
export const BASIC_REALM = 'basic-realm';

/**
 * What turns a path parameter that names a child by another identifier (a TAXII collection id) into the
 * child's name; a provider, found by its class through the application's injector.
 */
export interface ChildNameResolver {
  nameOf(value: string): Promise<string | undefined>;
}

/**
 * A resource fixed by name, or a child of a built-in resource named by a path parameter (a collection),
 * the parameter holding its name or, with `resolver`, a value the resolver turns into its name.
 */
export type ResourceRef = BuiltinResource | { parent: BuiltinResource; param: string; resolver?: abstract new (...args: never[]) => ChildNameResolver };

export type AccessRule =
  { kind: 'public' } | { kind: 'api-key-only' } | { kind: 'authenticated' } | { kind: 'permission'; resource: ResourceRef; action: RouteAction };

const VERSION_ERROR = 'BadRequest: `X-Api-Version` is present and not `1`.';
const UNAUTHORIZED =
  'Unauthorized: credentials are missing, malformed, unknown, expired or revoked. With a bearer token, get a new ' +
  'one from `GET /auth/token` and repeat the request.';

/** Every route that takes credentials reads the database (the key, then its own work). */
const DATABASE_UNAVAILABLE = {
  description:
    'ServiceUnavailable: the database does not answer (within a few seconds); the service recovers by itself ' +
    'when it returns. Retry after `Retry-After` seconds.',
  headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
};

/** The OpenAPI security of routes that take a bearer token or an API key. */
const CredentialsDoc = () => applyDecorators(ApiBearerAuth(), ApiSecurity('apiKey'));

/** No credentials needed (health). Every route must opt out explicitly: the guard fails closed. */
export const Public = () =>
  applyDecorators(
    // Declares no OpenAPI security: the document marks such operations `security: []` (openapi-document.ts).
    SetMetadata(ACCESS_RULE, { kind: 'public' } satisfies AccessRule),
    ApiErrors({ 400: VERSION_ERROR }),
  );

/** Only an `X-Api-Key` is accepted (the token endpoint). */
export const ApiKeyOnly = () =>
  applyDecorators(
    SetMetadata(ACCESS_RULE, { kind: 'api-key-only' } satisfies AccessRule),
    ApiSecurity('apiKey'),
    ApiErrors({
      400: VERSION_ERROR,
      401: 'Unauthorized: no `X-Api-Key`, or the key is unknown, expired or revoked (a bearer token is not accepted here).',
      503: DATABASE_UNAVAILABLE,
    }),
  );

/** Any valid credentials; the service filters what the caller may see (the collection listing). */
export const Authenticated = () =>
  applyDecorators(
    SetMetadata(ACCESS_RULE, { kind: 'authenticated' } satisfies AccessRule),
    CredentialsDoc(),
    ApiErrors({ 400: VERSION_ERROR, 401: UNAUTHORIZED, 503: DATABASE_UNAVAILABLE }),
  );

/**
 * The routes (a controller, or one handler) also take `Authorization: Basic` (any user name, the API key as the
 * password) and `Authorization: Token <key>`, and a 401 asks for Basic credentials in `realm`: firewalls,
 * resolvers and TAXII clients speak nothing else. Combine with an access decorator.
 */
export const AcceptsBasicCredentials = (realm: string) => applyDecorators(SetMetadata(BASIC_REALM, realm), ApiBasicAuth('basic'));

/** The route requires `action` on `resource` (decisions §3 rule, including `*Children` on the direct parent). */
export const RequirePermission = (resource: ResourceRef, action: RouteAction) =>
  applyDecorators(
    SetMetadata(ACCESS_RULE, { kind: 'permission', resource, action } satisfies AccessRule),
    CredentialsDoc(),
    ApiErrors({
      400: VERSION_ERROR,
      401: UNAUTHORIZED,
      403: `MissingPermissions: the key holds ${permissionRule(resource, action)}.`,
      429: {
        description:
          `LimitExceeded: the key's daily request limit on ${action} for this resource is used up (limits count per ` +
          'UTC day; a refused request is not counted). Retry after `Retry-After` seconds.',
        headers: RATE_LIMIT_HEADERS,
      },
      503: DATABASE_UNAVAILABLE,
    }),
  );

/** The rule of decisions §3 in words, for the 403 description. */
function permissionRule(resource: ResourceRef, action: RouteAction): string {
  const children = childrenActionOf(action);
  if (typeof resource !== 'string') {
    return `neither ${action} on the ${resource.param} named in the path nor ${children} on \`${resource.parent}\``;
  }
  const parentId = BUILTIN_RESOURCES[resource].parentId;
  const parent = Object.entries(BUILTIN_RESOURCES).find(([, node]) => node.id === parentId)?.[0];
  return parent ? `neither ${action} on \`${resource}\` nor ${children} on \`${parent}\`` : `no ${action} on \`${resource}\``;
}

const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Seconds until the next UTC midnight, when the daily counters start again.', schema: { type: 'integer' } },
  'RateLimit-Limit': { description: 'The limit that refused the request.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left today under that limit (0).', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the limit resets.', schema: { type: 'integer' } },
};

/** `@Principal() principal: Principal`: the authenticated key. */
export const Principal = createParamDecorator((_data: unknown, context: ExecutionContext): PrincipalType => {
  const principal = context.switchToHttp().getRequest<AccessRequest>().principal;
  if (!principal) throw new ApiError('Unauthorized', 'valid credentials are required');
  return principal;
});
