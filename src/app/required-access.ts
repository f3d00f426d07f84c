import type { ResourcesService } from '../auth/resources.service.js';
import { CommonErrors } from '../common/errors/api-error.js';
import type { ChildNameResolver, ResourceRef } from '../common/guard/access.decorators.js';
import { BUILTIN_RESOURCES, childrenActionOf, type Principal, type ResourceNode, type RouteAction } from '../common/guard/access.js';

/** The instance of a resolver class named by a route's rule (the guard gets it from Nest's container). */
export type ResolverOf = (type: abstract new (...args: never[]) => ChildNameResolver) => ChildNameResolver;

/**
 * The permission rule of a route (decisions §3), shared by the API's guard and the web console's: the
 * resource the route acts on when `principal` may do `action` there (for the rate-limit interceptor);
 * undefined for an unknown child the key could act on anyway (its handler answers 404); otherwise 403.
 */
export async function requiredAccessOf(
  resources: ResourcesService,
  principal: Principal,
  ref: ResourceRef,
  action: RouteAction,
  params: Record<string, unknown>,
  resolverOf?: ResolverOf,
): Promise<ResourceNode | undefined> {
  let resource: ResourceNode | undefined;
  if (typeof ref === 'string') {
    resource = BUILTIN_RESOURCES[ref];
  } else {
    // With a resolver, the parameter names the child indirectly (a TAXII collection id).
    const value = params[ref.param];
    const name = typeof value === 'string' && ref.resolver ? await resolverOf?.(ref.resolver).nameOf(value) : value;
    resource = typeof name === 'string' ? await resources.findChild(ref.parent, name) : undefined;
    if (!resource) {
      // An unknown child: a key that could act on any child learns it does not exist (the handler
      // answers 404); any other key learns nothing.
      if (principal.hasDirect(BUILTIN_RESOURCES[ref.parent].id, childrenActionOf(action))) return undefined;
      throw CommonErrors.missingPermissions();
    }
  }
  if (!principal.holds(resource, action)) throw CommonErrors.missingPermissions();
  return resource;
}
