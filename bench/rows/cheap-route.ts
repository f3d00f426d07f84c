import type { RowContext } from '../lib/row.js';
import { createCollection, hasRoute, RESOURCE, ROUTES } from './intel-setup.js';

/** The cheap authenticated GET of rows 1 and 9, and the resource its permission and limits target. */
export interface CheapRoute {
  path: string;
  label: string;
  resourceId: number;
}

/**
 * `GET /intel/collections/{name}` (view a collection: bearer token check, one key lookup, one
 * collection read) once collections exist; until then `GET /auth/resources` (token check, key lookup,
 * one small read). Set up once and shared by rows 1 and 9.
 */
export async function cheapRoute(ctx: RowContext): Promise<CheapRoute> {
  const cached = ctx.shared.get('cheapRoute') as CheapRoute | undefined;
  if (cached) return cached;
  let route: CheapRoute;
  if (hasRoute(ctx.routes, ROUTES.viewCollection) && ctx.routes.has(ROUTES.registerCollection)) {
    const collection = await createCollection(ctx, 'view');
    route = { path: `/intel/collections/${collection.name}`, label: 'GET /intel/collections/{name}', resourceId: collection.resourceId };
  } else {
    route = { path: '/auth/resources', label: 'GET /auth/resources (collections not built yet)', resourceId: RESOURCE.auth };
  }
  ctx.shared.set('cheapRoute', route);
  return route;
}

/** A bearer token (the SDK's credential) for a new key with Read on `resourceId`, optionally limited. */
export async function tokenForReader(ctx: RowContext, resourceId: number, dailyLimit?: number): Promise<string> {
  const { key } = await ctx.admin.createKey({
    permissions: [{ resource: resourceId, actions: ['Read'] }],
    ...(dailyLimit !== undefined && { limits: [{ resource: resourceId, action: 'Read', limit: dailyLimit }] }),
    description: `bench ${dailyLimit === undefined ? 'reader' : 'limited reader'}`,
  });
  return ctx.admin.withKey(key).token();
}
