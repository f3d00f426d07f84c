import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { toASCII } from 'tr46';
import { URL } from 'whatwg-url';
import { ApiError } from '../errors/api-error.js';
import {
  domainToAscii,
  IDNA_OPTIONS,
  inferObjectType,
  INSIGHT_KEY_TYPES,
  INSIGHT_OBJECT_TYPES,
  normalizeKey,
  normalizeKeySet,
  plainUrlHref,
  type KeyType,
  type ObjectKey,
} from './indicators.js';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof ApiError ? error.code : 'not an ApiError';
  }
  return undefined;
}

/** A key list from `[type, value]` pairs. */
const keys = (...pairs: [KeyType, string][]): ObjectKey[] => pairs.map(([type, value]) => ({ type, value }));

const valid: [KeyType, string, string][] = [
  ['MD5Hash', '627FCDB6CC9A5E16D657CA6CDEF0A6BB', '627fcdb6cc9a5e16d657ca6cdef0a6bb'],
  ['SHA1Hash', 'A'.repeat(40), 'a'.repeat(40)],
  ['SHA256Hash', 'aB'.repeat(32), 'ab'.repeat(32)],
  ['SHA512Hash', 'F0'.repeat(64), 'f0'.repeat(64)],
  ['DomainName', 'Bücher.Example', 'xn--bcher-kva.example'],
  ['DomainName', 'EXAMPLE.com.', 'example.com'],
  ['DomainName', 'xn--bcher-kva.de', 'xn--bcher-kva.de'],
  ['DomainName', '_dmarc.example.com', '_dmarc.example.com'],
  ['DomainName', `${'a'.repeat(63)}.com`, `${'a'.repeat(63)}.com`],
  // Tricky names: the answers come from the pinned tr46 package, so they are the same on every Node.
  ['DomainName', 'XN--BCHER-KVA.DE', 'xn--bcher-kva.de'],
  ['DomainName', 'faß.de', 'xn--fa-hia.de'],
  ['DomainName', 'ＥＸＡＭＰＬＥ。com', 'example.com'],
  ['DomainName', '💩.la', 'xn--ls8h.la'],
  ['DomainName', 'ab--cd.example', 'ab--cd.example'],
  [
    'DomainName',
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
  ],
  ['URL', 'HTTP://Example.COM:80/a?b#c', 'http://example.com/a?b#c'],
  ['URL', 'https://bücher.de:443', 'https://xn--bcher-kva.de/'],
  ['URL', 'http://1.2.3.4:8080', 'http://1.2.3.4:8080/'],
  ['URL', 'http://Faß.DE/x', 'http://xn--fa-hia.de/x'],
  ['IPAddress', '192.168.0.1', '192.168.0.1'],
  ['IPAddress', '2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
  ['IPAddress', '2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
  ['IPAddress', '::FFFF:1.2.3.4', '::ffff:1.2.3.4'],
  ['IPNetwork', '10.0.0.0/8', '10.0.0.0/8'],
  ['IPNetwork', '2001:DB8:0::/32', '2001:db8::/32'],
  ['IPNetwork', '0.0.0.0/0', '0.0.0.0/0'],
];

const invalid: [KeyType, string][] = [
  ['MD5Hash', 'a'.repeat(31)],
  ['MD5Hash', 'g'.repeat(32)],
  ['SHA1Hash', 'a'.repeat(41)],
  ['SHA256Hash', ` ${'a'.repeat(63)}`],
  ['SHA512Hash', 'a'.repeat(64)],
  ['DomainName', ''],
  ['DomainName', 'a..b'],
  ['DomainName', 'example.com..'],
  ['DomainName', '-a.com'],
  ['DomainName', 'a b.com'],
  ['DomainName', 'ex%41mple.com'],
  ['DomainName', `${'a'.repeat(64)}.com`],
  ['DomainName', `${'a.'.repeat(127)}com`],
  ['DomainName', '1.2.3.4'],
  ['DomainName', 'xn--zz.com'],
  ['DomainName', 'xn--a.com'],
  ['DomainName', 'xn--.com'],
  ['DomainName', 'XN--ZZ.COM'],
  ['DomainName', '.'],
  ['DomainName', '.example.com'],
  ['DomainName', 'a.-b.com'],
  ['DomainName', 'a\u200db.com'],
  ['DomainName', 'ab\u05d0.com'],
  ['DomainName', 'a/b.com'],
  ['DomainName', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`],
  ['DomainName', `${'ü'.repeat(60)}.com`],
  ['URL', '/relative/path'],
  ['URL', 'mailto:someone@example.com'],
  ['URL', 'file:///etc/passwd'],
  ['URL', 'http://xn--zz.com/'],
  ['URL', 'http://a\u200db.com/'],
  ['URL', 'http://exa mple.com/'],
  ['URL', `http://example.com/${'a'.repeat(2100)}`],
  ['IPAddress', '1.2.3.256'],
  ['IPAddress', '01.2.3.4'],
  ['IPAddress', '127.1'],
  ['IPAddress', '1::2::3'],
  ['IPAddress', 'fe80::1%eth0'],
  ['IPAddress', '10.0.0.0/8'],
  ['IPNetwork', '10.0.0.1/8'],
  ['IPNetwork', '2001:db8::1/32'],
  ['IPNetwork', '10.0.0.0/33'],
  ['IPNetwork', '10.0.0.0'],
  ['IPNetwork', '10.0.0.0/08'],
];

describe('normalizeKey', () => {
  it.each(valid)('%s %s → %s', (type, value, stored) => {
    expect(normalizeKey({ type, value })).toEqual({ type, value: stored });
  });

  it.each(invalid)('%s %s → InvalidKeyFormat', (type, value) => {
    expect(codeOf(() => normalizeKey({ type, value }))).toBe('InvalidKeyFormat');
  });

  // The stored-form fast paths (one test for a value already stored as it is) against the full path.
  const answer = (key: ObjectKey) => {
    try {
      return normalizeKey(key).value;
    } catch (error) {
      return error instanceof ApiError ? error.code : 'not an ApiError';
    }
  };

  it('gives a name in its stored form what the full path gives it', () => {
    // 2,000 runs each: the edges come from the constants below, not from chance. Labels near the fast path's
    // edges: lengths 62–64, hyphens and underscores at either end, digits only,
    // Punycode prefixes, capitals, non-ASCII letters; names up to and past 253 characters.
    const label = fc.oneof(
      fc.stringMatching(/^[a-z0-9_-]{0,6}$/),
      fc.constantFrom('xn--', 'xn--bcher-kva', 'xn-a', 'Ab', '0', '123', '-a', 'a-', '_', 'é', 'a'.repeat(62), 'a'.repeat(63), 'b'.repeat(64)),
    );
    const name = fc
      .array(label, { minLength: 1, maxLength: 6 })
      .chain((labels) => fc.nat({ max: 5 }).map((long) => [...labels, ...Array.from({ length: long }, () => 'c'.repeat(60))].join('.')));
    fc.assert(
      fc.property(name, (value) => {
        // A root dot is never stored: the name with one takes the full path, and answers as the name without.
        if (!value.endsWith('.')) expect(answer({ type: 'DomainName', value })).toBe(answer({ type: 'DomainName', value: `${value}.` }));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives an IPv4 address in its stored form what the parser gives it', () => {
    const octet = fc.oneof(fc.nat({ max: 300 }).map(String), fc.constantFrom('00', '01', '010', '0255', '256', '1000', '', '0x1', ' 1', '1e2', '٣'));
    const address = fc.array(octet, { minLength: 3, maxLength: 5 }).map((octets) => octets.join('.'));
    fc.assert(
      fc.property(address, (value) => {
        const parsed = ipaddr.IPv4.isValidFourPartDecimal(value) ? ipaddr.IPv4.parse(value).toString() : 'InvalidKeyFormat';
        expect(answer({ type: 'IPAddress', value })).toBe(parsed);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('domainToAscii', () => {
  // Labels of plain ASCII (the fast path) and of everything near it: Punycode prefixes in any case,
  // non-ASCII letters that lowercase to ASCII (KELVIN SIGN), dots, empty labels, a root dot.
  const label = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9_-]{0,12}$/),
    fc.constantFrom('xn--', 'XN--', 'Xn--zz', 'xn--bcher-kva', 'xn--', '\u212Aelvin', 'İ', 'ß', 'a\u200db', '-', '_'),
    fc.string({ maxLength: 4 }),
  );
  const name = fc.array(label, { minLength: 1, maxLength: 5 }).map((labels) => labels.join('.'));

  it('gives what tr46 gives for every name', () => {
    fc.assert(
      fc.property(name, (value) => {
        expect(domainToAscii(value)).toBe(toASCII(value, IDNA_OPTIONS));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('plainUrlHref', () => {
  // URLs around the fast path's edges: scheme case and other schemes, slash counts, userinfo, hosts that
  // are IPv4 or Punycode or end in a dot, default, zero-padded and out-of-range ports, dot and encoded
  // segments, characters the parser encodes, empty and odd queries, fragments.
  const scheme = fc.constantFrom('http', 'https', 'HTTP', 'hTTps', 'ftp', 'ws', 'file');
  const slashes = fc.constantFrom('://', ':/', ':///', ':\\\\', ':');
  const label = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/), fc.constantFrom('xn--bcher-kva', 'XN--a', '0x7f', '127', '1', 'a%41', ''));
  const host = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));
  const port = fc.constantFrom('', ':', ':0', ':80', ':443', ':080', ':8080', ':65535', ':65536', ':99999');
  const segment = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@-]{0,6}$/),
    fc.constantFrom('.', '..', '%2e', '.%2E', 'a b', '|', '\\', '"', '{x}', '\u00e9', '`'),
  );
  const path = fc.array(segment, { maxLength: 4 }).map((segments) => segments.map((s) => `/${s}`).join(''));
  const query = fc.oneof(fc.constant(''), fc.stringMatching(/^\?[A-Za-z0-9._~!$&()*+,;=:@/?'% -]{0,8}$/));
  const fragment = fc.constantFrom('', '', '#', '#a');
  const url = fc.tuple(scheme, slashes, fc.constantFrom('', 'user@', 'u:p@'), host, port, path, query, fragment).map((parts) => parts.join(''));

  it('gives the href of the URL parser whenever it gives one', () => {
    fc.assert(
      fc.property(url, (value) => {
        const plain = plainUrlHref(value);
        if (plain !== undefined) expect(plain).toBe(new URL(value).href);
      }),
      { numRuns: 20000 },
    );
  });

  it('takes the common URLs', () => {
    expect(plainUrlHref('HTTPS://U1.Lookup.Example/p')).toBe('https://u1.lookup.example/p');
    expect(plainUrlHref('http://example.com:8080')).toBe('http://example.com:8080/');
    expect(plainUrlHref('http://example.com/a/b?x=1&y=2')).toBe('http://example.com/a/b?x=1&y=2');
  });
});

describe('normalizeKeySet', () => {
  const md5: ObjectKey = { type: 'MD5Hash', value: 'a'.repeat(32) };
  const sha1: ObjectKey = { type: 'SHA1Hash', value: 'b'.repeat(40) };

  it('merges duplicates that are equal after normalisation', () => {
    expect(normalizeKeySet('File', [md5, { type: 'MD5Hash', value: 'A'.repeat(32) }, sha1])).toEqual([md5, sha1]);
  });

  it.each<[string, Parameters<typeof normalizeKeySet>]>([
    ['no keys', ['File', []]],
    ['a non-hash key on a File', ['File', [md5, { type: 'DomainName', value: 'a.com' }]]],
    ['two keys of one hash type', ['File', [md5, { type: 'MD5Hash', value: 'c'.repeat(32) }]]],
    ['a key of another type', ['DomainName', [{ type: 'URL', value: 'http://a.com/' }]]],
    [
      'two keys on a single-key type',
      [
        'IPAddress',
        [
          { type: 'IPAddress', value: '1.1.1.1' },
          { type: 'IPAddress', value: '1.1.1.2' },
        ],
      ],
    ],
    ['a hash on a URL', ['URL', [md5]]],
  ])('refuses %s with InvalidKeySet', (_name, args) => {
    expect(codeOf(() => normalizeKeySet(...args))).toBe('InvalidKeySet');
  });

  it('reports a bad key format before the key-set rules', () => {
    expect(codeOf(() => normalizeKeySet('URL', [md5, { type: 'MD5Hash', value: 'x' }]))).toBe('InvalidKeyFormat');
  });
});

describe('inferObjectType', () => {
  it('infers File from hash keys and the own type otherwise', () => {
    expect(inferObjectType(keys(['MD5Hash', 'x'], ['SHA1Hash', 'y']))).toBe('File');
    expect(inferObjectType(keys(['URL', 'x']))).toBe('URL');
    expect(inferObjectType(keys(['IPNetwork', 'x'], ['IPNetwork', 'x']))).toBe('IPNetwork');
  });

  it('refuses an empty or mixed key list with InvalidKeySet', () => {
    expect(codeOf(() => inferObjectType([]))).toBe('InvalidKeySet');
    expect(codeOf(() => inferObjectType(keys(['MD5Hash', 'x'], ['URL', 'y'])))).toBe('InvalidKeySet');
    expect(codeOf(() => inferObjectType(keys(['URL', 'x'], ['DomainName', 'y'])))).toBe('InvalidKeySet');
  });
});

describe('insight enums', () => {
  it('are the intel ones without IPNetwork, in the same order', () => {
    expect(INSIGHT_OBJECT_TYPES).toEqual(['File', 'DomainName', 'URL', 'IPAddress']);
    expect(INSIGHT_KEY_TYPES).toEqual(['MD5Hash', 'SHA1Hash', 'SHA256Hash', 'SHA512Hash', 'DomainName', 'URL', 'IPAddress']);
  });
});
