import { describe, expect, it } from '@jest/globals';
import { isUuid, LOWER_CASE_UUID_PATTERN, UUID_PATTERN } from './uuid.js';

describe('UUID patterns', () => {
  const id = 'c56a4180-65aa-42ec-a945-5fd21dec0538';

  it('takes a canonical hyphenated UUID in any case, the lower-case pattern only in lower case', () => {
    expect(isUuid(id)).toBe(true);
    expect(UUID_PATTERN.test(id.toUpperCase())).toBe(true);
    expect(LOWER_CASE_UUID_PATTERN.test(id)).toBe(true);
    expect(LOWER_CASE_UUID_PATTERN.test(id.toUpperCase())).toBe(false);
  });

  it('refuses anything else', () => {
    for (const value of ['', id.replaceAll('-', ''), `${id}0`, ` ${id}`, `{${id}}`, id.replace('c', 'g')]) expect(isUuid(value)).toBe(false);
  });
});
