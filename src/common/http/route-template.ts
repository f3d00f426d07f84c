import type { Request } from 'express';

/**
 * The route a request matched, as declared (`/intel/collections/:collectionName`), never the raw path: it
 * labels metrics and log lines with a bounded set of values. `unmatched` before or without routing (unknown
 * paths, bodies refused by the parser).
 */
export function routeTemplate(request: Request): string {
  const route = (request as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? request.baseUrl + route.path : 'unmatched';
}
