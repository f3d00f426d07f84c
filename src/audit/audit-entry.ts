import type { AccessRequest } from '../common/guard/access.js';
import { plainAddress } from '../common/http/client-address.js';
import { routeTemplate } from '../common/http/route-template.js';
import { requestIdOf } from '../common/logging/request-logging.js';

/** One audited request, as stored. Nothing here comes from a body or a header other than the request id. */
export interface AuditEntry {
  at: Date;
  keyId: number | null;
  requestId: string;
  method: string;
  route: string;
  /** `<resource>[/<id>]`: the built-in resource or `intel/<collection>`, then the object, task, file or key. */
  target: string | null;
  status: number;
  address: string | null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What a request is for the trail: a write (any other method than GET/HEAD/OPTIONS, unless its route only
 * requires Read), a read, or nothing (no route matched, or a public read such as the health checks). The
 * route's access rule is left on the request by the guard, the first step of every routed request.
 */
export function auditKindOf(request: AccessRequest): 'write' | 'read' | undefined {
  const rule = request.accessRule;
  if (!rule) return undefined;
  if (!SAFE_METHODS.has(request.method) && !(rule.kind === 'permission' && rule.action === 'Read')) return 'write';
  return rule.kind === 'public' ? undefined : 'read';
}

/** Fields of a created thing's view that name it (never `key`, the value of a new API key). */
const CREATED_ID_FIELDS = ['id', 'taskID', 'fileID', 'sessionID', 'schemaID', 'name'] as const;

export function auditEntryOf(request: AccessRequest, status: number, result?: unknown): AuditEntry {
  return {
    at: new Date(),
    keyId: request.principal?.keyId ?? null,
    requestId: requestIdOf(request) ?? '',
    method: request.method,
    route: storable(routeTemplate(request)),
    target: storable(targetOf(request, result)),
    status,
    address: plainAddress(request.ip) ?? null,
  };
}

/** PostgreSQL text cannot hold U+0000, which a percent-encoded path may carry into a route or a target. */
function storable<T extends string | null>(text: T): T {
  return (text === null ? text : text.replaceAll('\u0000', '\ufffd')) as T;
}

/**
 * From the route only: the resource its rule names (a collection through its path parameter), then the other
 * path parameters, the object key of a delete (query), or the id of what a write created (its answer).
 */
function targetOf(request: AccessRequest, result: unknown): string | null {
  const rule = request.accessRule;
  const params = (request.params ?? {}) as Record<string, string>;
  let resource: string | undefined;
  let collectionParam: string | undefined;
  if (rule?.kind === 'permission') {
    if (typeof rule.resource === 'string') {
      resource = rule.resource;
    } else {
      collectionParam = rule.resource.param;
      resource = `${rule.resource.parent}/${params[collectionParam]}`;
    }
  } else {
    // Routes without a resource of their own: their first path segment (`intel` for the lookup).
    resource = routeTemplate(request).split('/')[1] || undefined;
  }
  if (resource === undefined) return null;
  const ids = Object.entries(params)
    .filter(([name]) => name !== collectionParam)
    .map(([, value]) => value);
  const { objectKeyType, objectKey } = request.query ?? {};
  if (typeof objectKeyType === 'string' && typeof objectKey === 'string') ids.push(`${objectKeyType}:${objectKey}`);
  if (ids.length === 0 && typeof result === 'object' && result !== null && !Array.isArray(result)) {
    const created = result as Record<string, unknown>;
    const field = CREATED_ID_FIELDS.find((name) => typeof created[name] === 'string' || typeof created[name] === 'number');
    if (field) ids.push(String(created[field]));
  }
  return [resource, ...ids].join('/');
}
