/** JSON bodies above this many MiB are refused with 413 by the body parser (configure-app.ts). */
export const JSON_BODY_LIMIT_MIB = 16;

/**
 * JSON bodies nested deeper than this are refused for every endpoint: storing one, validating it against a
 * schema and serialising it again all recurse, and a few thousand levels exhaust the stack (a 500).
 * No real schema, context or result comes near this.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Attribute names the framework's validation pipe deletes from DTO-validated bodies at any depth (its
 * prototype-pollution guard; class-transformer cannot copy them either). A body holding one would be
 * checked and stored without it, so such a body is refused instead. Free-form documents taken without a
 * DTO (schema documents) are not stripped and keep them.
 */
export const RESERVED_ATTRIBUTE_NAMES: readonly string[] = ['__proto__', 'constructor', 'prototype'];

export type JsonBodyProblem =
  | { kind: 'tooDeep' }
  /** A number JSON.parse could not represent (`1e400` → Infinity): it would be stored as `null`. */
  | { kind: 'nonFiniteNumber' }
  /** JSON pointer (RFC 6901) of the first attribute named in RESERVED_ATTRIBUTE_NAMES. */
  | { kind: 'reservedAttribute'; pointer: string };

interface Visit {
  value: unknown;
  depth: number;
  parent?: Visit;
  key?: string;
}

function pointerOf(visit: Visit): string {
  const segments: string[] = [];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) {
    segments.push(at.key!.replace(/~/g, '~0').replace(/\//g, '~1'));
  }
  return segments.length === 0 ? '' : `/${segments.reverse().join('/')}`;
}

/**
 * One iterative walk over a parsed body (every request pays for it once, and it cannot overflow the stack
 * itself). Depth is reported first, then a non-finite number, then a reserved attribute name.
 */
export function inspectJsonBody(body: unknown, checkAttributeNames: boolean): JsonBodyProblem | undefined {
  let nonFinite = false;
  let reserved: Visit | undefined;
  const pending: Visit[] = [{ value: body, depth: 1 }];
  while (pending.length > 0) {
    const visit = pending.pop()!;
    const { value } = visit;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) nonFinite = true;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (visit.depth > MAX_JSON_DEPTH) return { kind: 'tooDeep' };
    const isArray = Array.isArray(value);
    for (const [key, child] of Object.entries(value)) {
      const childVisit = { value: child, depth: visit.depth + 1, parent: visit, key };
      if (checkAttributeNames && !reserved && !isArray && RESERVED_ATTRIBUTE_NAMES.includes(key)) reserved = childVisit;
      pending.push(childVisit);
    }
  }
  if (nonFinite) return { kind: 'nonFiniteNumber' };
  return reserved && { kind: 'reservedAttribute', pointer: pointerOf(reserved) };
}
