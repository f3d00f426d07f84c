import type { Request } from 'express';
import { RED, type TlpRank } from '../markings/tlp.js';
import type { AccessRule } from './access.decorators.js';

export const RESOURCE_ACTIONS = ['Read', 'Write', 'ReadChildren', 'WriteChildren'] as const;
export type ResourceAction = (typeof RESOURCE_ACTIONS)[number];
/** The actions a route can require; the `*Children` actions are only ever held, never required. */
export type RouteAction = 'Read' | 'Write';

/** Built-in resources of decisions §3, created by migration with these ids. */
export const BUILTIN_RESOURCES = {
  auth: { id: 1, parentId: null },
  intel: { id: 2, parentId: null },
  insight: { id: 3, parentId: null },
  filebox: { id: 4, parentId: null },
  tasks: { id: 5, parentId: 3 },
  'task-queue': { id: 6, parentId: 3 },
} as const;
export type BuiltinResource = keyof typeof BUILTIN_RESOURCES;

export interface ResourceNode {
  id: number;
  parentId: number | null;
}

export interface RequestLimitGrant {
  id: number;
  resourceId: number;
  action: ResourceAction;
  limit: number;
}

export function childrenActionOf(action: RouteAction): ResourceAction {
  return action === 'Read' ? 'ReadChildren' : 'WriteChildren';
}

/** The authenticated caller: one API key with its permissions and request limits. */
export class Principal {
  constructor(
    readonly keyId: number,
    readonly permissions: ReadonlyMap<number, ReadonlySet<ResourceAction>>,
    readonly limits: readonly RequestLimitGrant[],
    readonly expiresAt: Date | null,
    /** The most restrictive TLP marking (a rank, src/markings/tlp.ts) of what the key may read (extensions §19). */
    readonly maxTlp: TlpRank = RED,
    /**
     * The key's reliability as a rank (src/scoring/admiralty.ts's reliabilityRank; 2, F's, by default): the api
     * claim of what it writes is at least this reliable (extensions §18).
     */
    readonly reliability: number = 2,
  ) {}

  /** The key holds `action` on `resourceId` itself. */
  hasDirect(resourceId: number, action: ResourceAction): boolean {
    return this.permissions.get(resourceId)?.has(action) ?? false;
  }

  /** decisions §3: `A` on `R`, or `AChildren` on R's direct parent. */
  holds(resource: ResourceNode, action: RouteAction): boolean {
    return this.hasDirect(resource.id, action) || (resource.parentId !== null && this.hasDirect(resource.parentId, childrenActionOf(action)));
  }

  /** What this key may hand to a new key: `Read`/`Write` by the rule, `*Children` only when held directly. */
  canGrant(resource: ResourceNode, action: ResourceAction): boolean {
    return action === 'Read' || action === 'Write' ? this.holds(resource, action) : this.hasDirect(resource.id, action);
  }

  /** A key's ceiling this key may set (at creation or by PATCH): never one that sees more than this key does. */
  canGrantTlp(ceiling: TlpRank): boolean {
    return ceiling <= this.maxTlp;
  }
}

/** What the guard leaves on the request for handlers and the rate-limit interceptor. */
export interface AccessContext {
  /** The route's declared rule, left by the guard before it checks anything (the audit trail reads it). */
  accessRule?: AccessRule;
  principal?: Principal;
  /** The resolved `(resource, action)` the route required; absent for public or key-only routes. */
  requiredAccess?: { resource: ResourceNode; action: RouteAction };
}

export type AccessRequest = Request & AccessContext;
