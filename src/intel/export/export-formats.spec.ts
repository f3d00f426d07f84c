import { describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { csvField, csvRecord } from './export-formats.js';

describe('CSV of exports (RFC 4180)', () => {
  it('quotes fields with a quote, comma, CR or LF, doubling quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\rbreak')).toBe('"line\rbreak"');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
  });

  it('writes records a CSV parser reads back field for field', () => {
    const row = { type: 'URL', keyType: 'URL', value: 'https://x.example/a,b?"c"\r\n', expiresAt: null, context: { note: 'a\r\nb, "c"' } };
    const [parsed] = parse(csvRecord(row)) as string[][];
    expect(parsed).toEqual(['URL', 'URL', row.value, '', JSON.stringify(row.context)]);
  });
});
