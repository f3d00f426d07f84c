import fc from 'fast-check';
import type { KeyType } from '../common/indicators/indicators.js';

/**
 * Generators shared by the format specs: indicators every format must find, written as feeds write them.
 * Left out of the build (`*.spec-helpers.ts`); `arbitraries.spec.ts` checks the generators themselves.
 */

const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: length, maxLength: length });
// No `--`: the extraction takes `a--b.com` for a Punycode-like name and leaves it.
const label = fc.stringMatching(/^[a-z][a-z0-9]{0,6}(?:-[a-z0-9]{1,5})?$/);
const suffix = fc.constantFrom('com', 'org', 'net', 'co.uk', 'de', 'info');
const octet = fc.integer({ min: 0, max: 255 });

export const domainArb = fc.tuple(fc.array(label, { minLength: 1, maxLength: 3 }), suffix).map(([labels, tld]) => `${labels.join('.')}.${tld}`);
export const ipv4Arb = fc.tuple(octet, octet, octet, octet).map((octets) => octets.join('.'));
export const urlArb = fc
  .tuple(fc.constantFrom('http', 'https'), domainArb, fc.array(fc.stringMatching(/^[a-z0-9]{1,8}$/), { maxLength: 3 }))
  .map(([scheme, host, path]) => `${scheme}://${host}/${path.join('/')}`);

/** An indicator as a feed writes it, with the key type it is. */
export const indicatorArb: fc.Arbitrary<{ type: KeyType; value: string }> = fc.oneof(
  hex(32).map((value) => ({ type: 'MD5Hash' as const, value })),
  hex(40).map((value) => ({ type: 'SHA1Hash' as const, value })),
  hex(64).map((value) => ({ type: 'SHA256Hash' as const, value })),
  domainArb.map((value) => ({ type: 'DomainName' as const, value })),
  ipv4Arb.map((value) => ({ type: 'IPAddress' as const, value })),
  urlArb.map((value) => ({ type: 'URL' as const, value })),
);

/** The usual defanging of a value: dots bracketed, `hxxp` schemes, `[:]//`. */
export const defang = (value: string) => value.replace(/\./g, '[.]').replace(/^http/, 'hxxp').replace('://', '[:]//');

/** A text cut into chunks at the given places, as strings or as UTF-8 bytes cut anywhere (inside a character too). */
export function cut(text: string, places: number[], bytes: boolean): (string | Uint8Array)[] {
  const whole = bytes ? new TextEncoder().encode(text) : text;
  const at = [...new Set(places.map((place) => place % (whole.length + 1)))].sort((a, b) => a - b);
  const chunks: (string | Uint8Array)[] = [];
  let start = 0;
  for (const end of [...at, whole.length]) {
    chunks.push(whole.slice(start, end));
    start = end;
  }
  return chunks;
}

export async function all<T>(records: AsyncIterable<T>): Promise<T[]> {
  const list: T[] = [];
  for await (const record of records) list.push(record);
  return list;
}
