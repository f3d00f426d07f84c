/**
 * JSON bodies nested deeper than this are refused for every endpoint: storing one, validating it against a
 * schema and serialising it again all recurse, and a few thousand levels exhaust the stack (a 500).
 * No real schema, context or result comes near this.
 */
export const MAX_JSON_DEPTH = 256;

/** Iterative, so that the check itself cannot overflow. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}
