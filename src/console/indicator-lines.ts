import ipaddr from 'ipaddr.js';
import type { KeyType, ObjectKey } from '../common/indicators/index.js';
import { refang } from '../formats/text.js';

/** Most lines one lookup paste may hold (the form itself is capped at MAX_FORM_BYTES). */
export const MAX_LOOKUP_LINES = 10_000;

const HASH_TYPES: Record<number, KeyType> = { 32: 'MD5Hash', 40: 'SHA1Hash', 64: 'SHA256Hash', 128: 'SHA512Hash' };

/** The key type a pasted indicator most likely is; its value is then normalised as the API normalises. */
export function keyOfLine(line: string): ObjectKey {
  const value = refang(line.trim());
  const hash = /^[0-9a-f]+$/i.test(value) ? HASH_TYPES[value.length] : undefined;
  if (hash) return { type: hash, value };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return { type: 'URL', value };
  // ipaddr's checks parse by throwing, which is slow: only text that can be an address is parsed.
  if (/^[0-9a-f:.]+\/\d+$/i.test(value) && ipaddr.isValidCIDR(value)) return { type: 'IPNetwork', value };
  if (/^[0-9a-f:.]+(%\S+)?$/i.test(value) && ipaddr.isValid(value) && (value.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(value))) {
    return { type: 'IPAddress', value };
  }
  return { type: 'DomainName', value };
}

/** The non-empty lines of a paste. */
export function linesOf(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
