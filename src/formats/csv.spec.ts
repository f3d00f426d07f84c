import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { normalizeKey } from '../common/indicators/indicators.js';
import { all, cut, indicatorArb } from './arbitraries.spec-helpers.js';
import { parseCsv, streamCsv } from './csv.js';

const quote = (cell: string) => (/[",\r\n]/.test(cell) || cell.trim() !== cell ? `"${cell.replace(/"/g, '""')}"` : cell);
const TYPE_NAMES = { MD5Hash: 'md5', SHA1Hash: 'SHA1Hash', SHA256Hash: 'sha256', DomainName: 'hostname', IPAddress: 'ip-dst', URL: 'url' } as Record<
  string,
  string
>;

describe('CSV', () => {
  it('reads the rows of named columns back: keys normalised, non-empty context cells copied', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(indicatorArb, fc.string({ maxLength: 12 })), { minLength: 1, maxLength: 8 }), (rows) => {
        const text = ['note,type,value', ...rows.map(([key, note]) => [note, TYPE_NAMES[key.type], key.value].map(quote).join(','))].join('\r\n');
        const parsed = parseCsv(text, { typeColumn: 'type', valueColumn: 'value', contextColumns: ['note'], context: { feed: 'x' } });
        expect(parsed).toEqual({
          ok: true,
          records: rows.map(([key, note], index) => ({
            kind: 'form',
            line: index + 2,
            form: {
              type: key.type === 'MD5Hash' || key.type === 'SHA1Hash' || key.type === 'SHA256Hash' ? 'File' : key.type,
              keys: [normalizeKey(key)],
              context: { feed: 'x', ...(note !== '' && { note }) },
            },
          })),
        });
      }),
    );
  });

  it('never throws, and streams what it reads whole however the body is cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), fc.array(fc.nat()), fc.boolean(), async (body, places, bytes) => {
        const text = `type,value\n${body}`;
        const options = { typeColumn: 'type', valueColumn: 'value' };
        const whole = parseCsv(text, options);
        const streamed = await all(streamCsv(cut(text, places, bytes), options));
        if (whole.ok) expect(streamed).toEqual(whole.records);
        else expect(streamed[streamed.length - 1]).toEqual({ kind: 'failed', failure: whole.failure });
      }),
      { numRuns: 60 },
    );
    fc.assert(fc.property(fc.string(), fc.string(), (text, column) => void parseCsv(text, { valueColumn: column })));
  });

  it('keeps an invalid row as an unchecked form, and fails a malformed body before a missing column', () => {
    expect(parseCsv('type,value\nmd5,nothex\nmutex,abc\n', { typeColumn: 'type', valueColumn: 'value' })).toEqual({
      ok: true,
      records: [
        {
          kind: 'rejected',
          rejection: {
            line: 2,
            value: 'nothex',
            reason: 'invalid MD5Hash key "nothex": expected 32 hexadecimal digits',
            unchecked: { type: 'File', keys: [{ type: 'MD5Hash', value: 'nothex' }], context: {} },
          },
        },
        {
          kind: 'rejected',
          rejection: {
            line: 3,
            value: 'abc',
            reason: 'unknown key type "mutex"',
            unchecked: { type: 'mutex', keys: [{ type: 'mutex', value: 'abc' }], context: {} },
          },
        },
      ],
    });
    expect(parseCsv('a,b\n"x,1\n', { typeColumn: 'type', valueColumn: 'value' })).toMatchObject({ ok: false, failure: { code: 'MalformedCsv' } });
    expect(parseCsv('a,b\n1,2\n', { typeColumn: 'a', valueColumn: 'value' })).toEqual({
      ok: false,
      failure: { code: 'MissingColumn', message: 'the CSV header has no column "value"', column: 'value' },
    });
  });

  it('reads a feed as ThreatFox writes it: a preamble, a commented header, padded cells, types inferred', async () => {
    const feed = [
      '################################################################',
      '# ThreatFox IOCs: CSV export',
      '#',
      '# "first_seen_utc","ioc_value","malware"',
      '"2026-01-01 10:00:00", "hxxp://evil-example[.]com/gate.php", "win.emotet"',
      '"2026-01-01 10:01:00", "198.51.100.7:443", "win.qakbot"',
      '"2026-01-01 10:02:00", "-", "win.qakbot"',
    ].join('\n');
    const options = { valueColumn: 'ioc_value', contextColumns: ['malware'], skipLines: 3, commentedHeader: true, trim: true };
    const records = await all(streamCsv(feed, options));
    expect(records).toEqual([
      { kind: 'form', line: 5, form: { type: 'URL', keys: [{ type: 'URL', value: 'http://evil-example.com/gate.php' }], context: { malware: 'win.emotet' } } },
      { kind: 'form', line: 6, form: { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '198.51.100.7' }], context: { malware: 'win.qakbot' } } },
      { kind: 'rejected', rejection: { line: 7, value: '-', reason: 'no indicator found in the value' } },
    ]);
    expect(parseCsv(feed, options)).toEqual({ ok: true, records });
    expect((await all(streamCsv(feed, { ...options, valueColumn: 'ioc' }))).pop()).toMatchObject({ kind: 'failed', failure: { code: 'MissingColumn' } });
  });
});
