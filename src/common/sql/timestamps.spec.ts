import { describe, expect, it } from '@jest/globals';
import { isoMicros, isoUtc } from './timestamps.js';

describe('timestamps as text', () => {
  it('spells milliseconds and microseconds in UTC with a Z, around any expression', () => {
    expect(isoUtc('o.expires_at')).toBe(`to_char((o.expires_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
    expect(isoMicros(`ch.seq_at + interval '1 microsecond'`)).toBe(
      `to_char((ch.seq_at + interval '1 microsecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    );
  });
});
