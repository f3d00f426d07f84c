import { describe, expect, it } from '@jest/globals';
import { retryAfterSeconds } from './source-fetch.js';

describe('retryAfterSeconds', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads delay-seconds and an HTTP date, capped at 24 h; null when absent or unreadable', () => {
    expect(retryAfterSeconds(' 120 ', now)).toBe(120);
    expect(retryAfterSeconds('99999999999999999999', now)).toBe(86_400);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 01:00:00 GMT', now)).toBe(3600);
    expect(retryAfterSeconds('Fri, 01 Jan 2027 00:00:00 GMT', now)).toBe(86_400);
    expect(retryAfterSeconds('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds('soon', now)).toBeNull();
    expect(retryAfterSeconds(null, now)).toBeNull();
  });
});
