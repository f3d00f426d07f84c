import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { normalizeKey } from '../common/indicators/indicators.js';
import { all, cut, defang, indicatorArb } from './arbitraries.spec-helpers.js';
import { extractAll, extractIndicators, NO_INDICATOR, refang, streamTextList } from './text.js';

const keys = (text: string) =>
  extractIndicators(text)
    .map((key) => `${key.type} ${key.value}`)
    .sort();

describe('free-text extraction', () => {
  it('refangs the usual forms, but not a dot between spaces', () => {
    expect(refang('evil[.]example(.)com{.}org[dot]net')).toBe('evil.example.com.org.net');
    expect(refang('hxxps[:]//a[.]example[/]x hxxp://b h**p://c')).toBe('https://a.example/x http://b http://c');
    expect(refang('bad[at]evil.example (at) [@]')).toBe('bad@evil.example @ @');
    expect(refang('the end . Then')).toBe('the end . Then');
  });

  it('finds hashes, URLs, known-suffix domains, addresses and networks, each once, leaving distractors', () => {
    const md5 = 'D41D8CD98F00B204E9800998ECF8427E';
    const sha1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
    const sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    const report = `
      The dropper (MD5 ${md5}, SHA-1 ${sha1}) downloads hxxps://cdn.evil-example[.]com/payload.bin and
      beacons to update[.]bad-domain(.)co[.]uk, 198.51.100[.]7 and 2001:db8::1; the C2 range is 203.0.113.0/24
      and 2001:db8:1::/48. Mail from phish[at]sender-example[.]org. Again: ${md5.toLowerCase()}, 198.51.100.7.
      Payload hash ${sha256}.
      Distractors: version 1.2.3.4 of the agent, v10.0.0.1, files report.pdf, setup.exe, invoice.zip and
      notes.txt, an unknown suffix host.invalidtld, a sentence end . Then another, and 999.1.1.1.
    `;
    expect(keys(report)).toEqual(
      [
        `MD5Hash ${md5.toLowerCase()}`,
        `SHA1Hash ${sha1}`,
        `SHA256Hash ${sha256}`,
        'URL https://cdn.evil-example.com/payload.bin',
        'DomainName update.bad-domain.co.uk',
        'DomainName sender-example.org',
        'IPAddress 198.51.100.7',
        'IPAddress 2001:db8::1',
        'IPNetwork 203.0.113.0/24',
        'IPNetwork 2001:db8:1::/48',
      ].sort(),
    );
  });

  it('ends URLs where prose does, and wants three groups in an IPv6 address', () => {
    expect(keys('see http://evil-example.com/x. Also (https://b.evil-example.com/q?a=(1)) and http://c.evil-example.com/p),')).toEqual([
      'URL http://c.evil-example.com/p',
      'URL http://evil-example.com/x',
      'URL https://b.evil-example.com/q?a=(1)',
    ]);
    expect(keys('std::vector a::b dead::beef fe80::1 2001:db8::7')).toEqual(['IPAddress 2001:db8::7']);
  });

  it('finds nothing in text without indicators', () => {
    expect(keys('Nothing here: version 2.0.1.3, a.b, report.docx, 12:30:45.')).toEqual([]);
  });
});

describe('free text, fuzzed', () => {
  it('never throws, and finds only keys in their stored form', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        for (const key of extractIndicators(text)) expect(normalizeKey(key)).toEqual(key);
      }),
    );
  });

  it('finds in a text that is one address, network or hash alone exactly what the whole extraction finds', () => {
    const number = fc.oneof(fc.integer({ min: 0, max: 255 }).map(String), fc.stringMatching(/^[0-9]{1,3}$/));
    const quad = fc.tuple(number, number, number, number).map((parts) => parts.join('.'));
    const alone = fc.oneof(
      quad,
      fc.tuple(quad, fc.stringMatching(/^[0-9]{1,2}$/)).map(([address, bits]) => `${address}/${bits}`),
      ...[32, 40, 64, 128].map((length) => fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: length, maxLength: length })),
    );
    fc.assert(
      fc.property(alone, (text) => {
        expect(extractIndicators(text)).toEqual(extractAll(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('finds every indicator of a text, and the same in its defanged form', () => {
    fc.assert(
      fc.property(fc.array(indicatorArb, { minLength: 1, maxLength: 6 }), fc.constantFrom(' ', '\n', ', ', ' and '), (indicators, gap) => {
        const fanged = keys(indicators.map((key) => key.value).join(gap));
        expect(fanged).toEqual(keys(indicators.map((key) => defang(key.value)).join(gap)));
        for (const key of indicators) expect(fanged).toContain(`${key.type} ${normalizeKey(key).value}`);
      }),
    );
  });
});

describe('indicator lists', () => {
  const context = { feed: 'drop' };
  const list = [
    '; Spamhaus DROP List 2026/01/01',
    '# a comment line',
    '',
    '1.10.16.0/20 ; SBL256894',
    '198.51.100[.]7:443',
    'hxxps://evil-example[.]com/gate.php # inline',
    'not an indicator',
    '[2001:db8::1]:8443',
  ].join('\r\n');

  it('reads one indicator per line: comments cut, defanging undone, ports dropped, the rest rejected with its line', async () => {
    expect(await all(streamTextList(list, context))).toEqual([
      { kind: 'form', line: 4, form: { type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '1.10.16.0/20' }], context } },
      { kind: 'form', line: 5, form: { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '198.51.100.7' }], context } },
      { kind: 'form', line: 6, form: { type: 'URL', keys: [{ type: 'URL', value: 'https://evil-example.com/gate.php' }], context } },
      { kind: 'rejected', rejection: { line: 7, value: 'not an indicator', reason: NO_INDICATOR } },
      { kind: 'form', line: 8, form: { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '2001:db8::1' }], context } },
    ]);
  });

  it('gives the same records however the body is cut, and fails on bytes that are not UTF-8', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            indicatorArb.map((key) => key.value),
            fc.string({ unit: 'grapheme', maxLength: 20 }),
          ),
        ),
        fc.array(fc.nat()),
        fc.boolean(),
        async (lines, places, bytes) => {
          const text = lines.join('\n');
          expect(await all(streamTextList(cut(text, places, bytes), context))).toEqual(await all(streamTextList(text, context)));
        },
      ),
      { numRuns: 50 },
    );
    const records = await all(streamTextList([Buffer.from('1.2.3.4\n'), Buffer.from([0xff, 0x0a])], context));
    expect(records.map((record) => record.kind)).toEqual(['form', 'failed']);
    expect(records[1]).toEqual({ kind: 'failed', failure: { code: 'NotUtf8', message: 'the body is not valid UTF-8' } });
  });
});
