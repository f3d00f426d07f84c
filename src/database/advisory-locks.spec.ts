import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import * as locks from './advisory-locks.js';

const INT4_MAX = 2 ** 31 - 1;

describe('advisory lock keys', () => {
  const keys = Object.entries(locks);

  it('are all distinct', () => {
    const byNumber = new Map<number, string[]>();
    for (const [name, key] of keys) byNumber.set(key, [...(byNumber.get(key) ?? []), name]);
    expect([...byNumber.values()].filter((names) => names.length > 1)).toEqual([]);
    expect(keys.length).toBeGreaterThan(5);
  });

  it('fit either form (a two-key lock takes int4 keys)', () => {
    for (const [, key] of keys) {
      expect(Number.isInteger(key) && key > 0 && key <= INT4_MAX).toBe(true);
    }
  });

  it('are written nowhere else in src/', () => {
    const src = fileURLToPath(new URL('..', import.meta.url));
    const elsewhere = readdirSync(src, { recursive: true, encoding: 'utf8' })
      .filter((path) => path.endsWith('.ts') && !path.startsWith(join('database', 'advisory-locks')))
      .filter((path) => /\b7_?240_?\d{3}\b/.test(readFileSync(join(src, path), 'utf8')));
    expect(elsewhere).toEqual([]);
  });
});
