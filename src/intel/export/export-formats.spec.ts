import { describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { bundleIdOf, csvField, csvRecord } from './export-formats.js';

describe('CSV of exports (RFC 4180)', () => {
  it('quotes fields with a quote, comma, CR or LF, doubling quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\rbreak')).toBe('"line\rbreak"');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
  });

  it('writes records a CSV parser reads back field for field', () => {
    const row = { type: 'URL', keyType: 'URL', value: 'https://x.example/a,b?"c"\r\n', expiresAt: null, context: { note: 'a\r\nb, "c"' }, tlp: 3 as const };
    const [parsed] = parse(csvRecord(row)) as string[][];
    expect(parsed).toEqual(['URL', 'URL', row.value, '', JSON.stringify(row.context), 'TLP:AMBER+STRICT']);
  });
});

describe('bundle id of a STIX export', () => {
  it('is a UUIDv4 in form (version 4, RFC variant) as stix2-validator --strict wants, the same for the same tag', () => {
    const UUID_V4 = /^bundle--[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const tags = Array.from({ length: 200 }, (_, i) => `"${i}.0.0-abcdefghijklmnop"`);
    for (const tag of tags) expect(bundleIdOf(tag)).toMatch(UUID_V4);
    expect(bundleIdOf(tags[0])).toBe(bundleIdOf(tags[0]));
    expect(new Set(tags.map(bundleIdOf)).size).toBe(tags.length);
  });
});
