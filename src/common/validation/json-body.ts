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

/**
 * Text PostgreSQL cannot store: U+0000 (neither `text` nor `jsonb` can hold it) and UTF-16 surrogates that are
 * not part of a pair (`jsonb` refuses their escapes; a `text` column would silently get U+FFFD instead).
 */
const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isUnstorableText(text: string): boolean {
  return UNSTORABLE_TEXT.test(text);
}

export type JsonBodyProblem =
  | { kind: 'tooDeep' }
  /** A number JSON.parse could not represent (`1e400` → Infinity): it would be stored as `null`. */
  | { kind: 'nonFiniteNumber' }
  /** JSON pointer (RFC 6901) of the first attribute named in RESERVED_ATTRIBUTE_NAMES. */
  | { kind: 'reservedAttribute'; pointer: string }
  /** JSON pointer of the first string (or attribute name) holding unstorable text (see isUnstorableText). */
  | { kind: 'unstorableText'; pointer: string };

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
 * itself). Depth is reported first, then a non-finite number, then a reserved attribute name, then
 * unstorable text. Reserved names matter where the pipe would strip them (DTO bodies); unstorable text where
 * the value reaches a text or jsonb column (DTO bodies, query and path values): free-form documents (schemas,
 * stored as `json`) may hold both.
 */
export function inspectJsonBody(body: unknown, check: { attributeNames: boolean; text: boolean }): JsonBodyProblem | undefined {
  let nonFinite = false;
  let reserved: Visit | undefined;
  let unstorable: Visit | undefined;
  const pending: Visit[] = [{ value: body, depth: 1 }];
  while (pending.length > 0) {
    const visit = pending.pop()!;
    const { value } = visit;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) nonFinite = true;
      continue;
    }
    if (typeof value === 'string') {
      if (check.text && !unstorable && isUnstorableText(value)) unstorable = visit;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (visit.depth > MAX_JSON_DEPTH) return { kind: 'tooDeep' };
    const isArray = Array.isArray(value);
    for (const [key, child] of Object.entries(value)) {
      const childVisit = { value: child, depth: visit.depth + 1, parent: visit, key };
      if (check.attributeNames && !reserved && !isArray && RESERVED_ATTRIBUTE_NAMES.includes(key)) reserved = childVisit;
      if (check.text && !unstorable && !isArray && isUnstorableText(key)) unstorable = childVisit;
      pending.push(childVisit);
    }
  }
  if (nonFinite) return { kind: 'nonFiniteNumber' };
  if (reserved) return { kind: 'reservedAttribute', pointer: pointerOf(reserved) };
  return unstorable && { kind: 'unstorableText', pointer: pointerOf(unstorable) };
}
