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

/**
 * Whether a parsed JSON value holds a number JSON.parse could not represent (`1e400` → Infinity). Such a
 * value would be stored as `null` (JSON.stringify(Infinity)), so what is read back would differ from what
 * was accepted and validated. Iterative, like nestedDeeperThan.
 */
export function holdsNonFiniteNumber(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === 'number' && !Number.isFinite(current)) return true;
    // No spread: an array of millions of items would exceed the argument limit.
    if (typeof current === 'object' && current !== null) for (const child of Object.values(current)) pending.push(child);
  }
  return false;
}
