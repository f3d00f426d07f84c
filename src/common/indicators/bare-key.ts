import ipaddr from 'ipaddr.js';
import { STORED_IPV4, type KeyType, type ObjectKey } from './indicators.js';

const HASH_TYPES: Record<number, KeyType> = { 32: 'MD5Hash', 40: 'SHA1Hash', 64: 'SHA256Hash', 128: 'SHA512Hash' };

/** Text no rule of refangValue changes (most values): no bracket of a rule, no space at either end, no `hxxp` start. */
const NOTHING_TO_REFANG = /^(?!hxxp|\s)[^[({]*(?<!\s)$/i;

/**
 * Undoes the usual defanging of shared indicator lists: `hxxp(s)`, `[.]` `(.)` `{.}` `[dot]`, `[:]`,
 * `[://]`, `[at]` `(at)` `[@]`.
 */
export function refangValue(text: string): string {
  if (NOTHING_TO_REFANG.test(text)) return text;
  return text
    .trim()
    .replace(/^hxxp/i, 'http')
    .replace(/\[:\/\/\]/g, '://')
    .replace(/\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)/gi, '.')
    .replace(/\[:\]/g, ':')
    .replace(/\[at\]|\(at\)|\[@\]/gi, '@');
}

/**
 * The key type a bare value (no type given) most likely is, as the console's lookup types a pasted line:
 * a hash by its length, a URL by its scheme, an address or network, otherwise a domain name. The value
 * is refanged, not normalised (normalizeKey does that, and refuses what is none of these).
 */
export function bareKey(text: string): ObjectKey {
  const value = refangValue(text);
  // The commonest bare value, told by one test: ipaddr's checks below take far longer.
  if (STORED_IPV4.test(value)) return { type: 'IPAddress', value };
  const hash = /^[0-9a-f]+$/i.test(value) ? HASH_TYPES[value.length] : undefined;
  if (hash) return { type: hash, value };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return { type: 'URL', value };
  // ipaddr's checks parse by throwing, which is slow: only text that can be an address is parsed.
  if (/^[0-9a-f:.]+\/\d+$/i.test(value) && ipaddr.isValidCIDR(value)) return { type: 'IPNetwork', value };
  if (/^[0-9a-f:.]+$/i.test(value) && ipaddr.isValid(value) && (value.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(value))) {
    return { type: 'IPAddress', value };
  }
  return { type: 'DomainName', value };
}
