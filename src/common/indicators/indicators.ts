import ipaddr from 'ipaddr.js';
import { toASCII } from 'tr46';
import { URL } from 'whatwg-url';
import { ApiError } from '../errors/api-error.js';

/**
 * The indicator model shared by intel objects and insight task results: object and key types, key
 * normalisation and the key-set rules of decisions §7. Pure functions; failures are 422 ApiErrors.
 */

export const OBJECT_TYPES = ['File', 'DomainName', 'URL', 'IPAddress', 'IPNetwork'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

export const KEY_TYPES = ['MD5Hash', 'SHA1Hash', 'SHA256Hash', 'SHA512Hash', 'DomainName', 'URL', 'IPAddress', 'IPNetwork'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** Insight has the same types without `IPNetwork` (wire-contract §6), in the same order. */
export type InsightObjectType = Exclude<ObjectType, 'IPNetwork'>;
export const INSIGHT_OBJECT_TYPES: readonly InsightObjectType[] = OBJECT_TYPES.filter((type): type is InsightObjectType => type !== 'IPNetwork');
export type InsightKeyType = Exclude<KeyType, 'IPNetwork'>;
export const INSIGHT_KEY_TYPES: readonly InsightKeyType[] = KEY_TYPES.filter((type): type is InsightKeyType => type !== 'IPNetwork');

export interface ObjectKey {
  type: KeyType;
  value: string;
}

/** Longest stored key value. Keeps every value well inside a btree index entry (about 2.7 kB). */
export const MAX_KEY_VALUE_LENGTH = 2048;

const HASH_LENGTHS: Partial<Record<KeyType, number>> = { MD5Hash: 32, SHA1Hash: 40, SHA256Hash: 64, SHA512Hash: 128 };

export function isHashKeyType(type: KeyType): boolean {
  return HASH_LENGTHS[type] !== undefined;
}

function invalidKeyFormat(key: ObjectKey, reason: string): ApiError {
  return new ApiError('InvalidKeyFormat', `invalid ${key.type} key "${key.value}": ${reason}`, {
    key: { type: key.type, value: key.value },
  });
}

function invalidKeySet(message: string): ApiError {
  return new ApiError('InvalidKeySet', message);
}

/**
 * A label after IDN conversion: letters, digits, hyphens and underscores, 1–63 characters, no hyphen at
 * either end. Underscores are allowed because they occur in real host names (service labels, sloppy
 * DNS records) that intel feeds report; everything else outside LDH is refused.
 */
const DOMAIN_LABEL = /^(?=.{1,63}$)[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

/**
 * UTS #46 processing as the WHATWG URL standard's "domain to ASCII" does it (a label with invalid Punycode,
 * like `xn--zz`, is refused). The pinned `tr46` package does the work instead of the runtime's URL parser,
 * whose answers change between Node releases: the same name must give the same key on every supported
 * Node. Label syntax and lengths are checked by our own rules below.
 */
export const IDNA_OPTIONS = {
  checkBidi: true,
  checkHyphens: false,
  checkJoiners: true,
  ignoreInvalidPunycode: false,
  transitionalProcessing: false,
  useSTD3ASCIIRules: false,
  verifyDNSLength: false,
};

/** Names of ASCII letters, digits, hyphens and underscores in non-empty labels, none of them Punycode (`xn--`). */
const PLAIN_ASCII_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
const PUNYCODE_LABEL = /(?:^|\.)xn--/i;

/**
 * A name in ASCII as UTS #46 gives it (null: refused). For a plain ASCII name, the common case, that is
 * only lowercasing (every other character of it is valid and unmapped, and no Bidi or joiner rule applies
 * to ASCII), done here without the library's per-character tables: a lookup of 1,000 keys spent 2.2 ms in
 * tr46 for its 200 names. indicators.spec.ts holds this to the library on generated names.
 */
export function domainToAscii(name: string): string | null {
  if (PLAIN_ASCII_NAME.test(name) && !PUNYCODE_LABEL.test(name)) return name.toLowerCase();
  return toASCII(name, IDNA_OPTIONS);
}

/**
 * A name already in its stored form, told by one test (most names a feed or a `check` sends): lowercase
 * ASCII labels as DOMAIN_LABEL takes them, none Punycode (those go through tr46), a last label not all
 * digits, 253 characters at most. indicators.spec.ts holds it to the full path.
 */
const LABEL = '(?!xn--)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const STORED_NAME = new RegExp(`^(?=.{1,253}$)(?:${LABEL}\\.)*(?=[a-z0-9_-]*[a-z_-])${LABEL}$`);

function normalizeDomainName(key: ObjectKey): string {
  if (STORED_NAME.test(key.value)) return key.value;
  const withoutRoot = key.value.endsWith('.') ? key.value.slice(0, -1) : key.value;
  const ascii = domainToAscii(withoutRoot);
  if (ascii === null || ascii === '') throw invalidKeyFormat(key, 'not a host name');
  if (ascii.length > 253) throw invalidKeyFormat(key, 'longer than 253 characters');
  const labels = ascii.split('.');
  if (!labels.every((label) => DOMAIN_LABEL.test(label))) {
    throw invalidKeyFormat(key, 'labels must be 1–63 letters, digits, hyphens or underscores');
  }
  // An all-numeric last label makes it an IPv4 address, not a name (RFC 3696 §2).
  if (/^\d+$/.test(labels[labels.length - 1])) throw invalidKeyFormat(key, 'the top-level label is numeric');
  return ascii;
}

/**
 * `http(s)://host[:port][/path][?query]` with a plain ASCII name as its host and nothing the URL parser
 * would rewrite apart from case: no userinfo, fragment, percent sign, backslash, space or other character
 * it percent-encodes (the apostrophe is one, in the query of these schemes).
 */
const PLAIN_URL = /^(https?):\/\/([a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::([1-9][0-9]{0,4}))?((?:\/[a-z0-9._~!$&'()*+,;=:@-]*)*)(\?[a-z0-9._~!$&()*+,;=:@/?-]*)?$/i;
const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443' };

/**
 * The href the URL standard gives a plain URL (PLAIN_URL), or undefined for any other: scheme and host
 * lowercased, the default port dropped, an empty path made `/`. Left to the parser: a Punycode host, a last
 * label that makes the host an IPv4 address (digits, `0x…`), a port of 65536 or more, and dot segments.
 * A lookup of 1,000 keys spent 5 ms in the parser for its 200 URLs; indicators.spec.ts holds this to it.
 */
export function plainUrlHref(value: string): string | undefined {
  const match = PLAIN_URL.exec(value);
  if (!match) return undefined;
  const [, scheme, host, port, path, query] = match;
  const lowerScheme = scheme.toLowerCase();
  if (PUNYCODE_LABEL.test(host) || !/^[a-z]/i.test(host.slice(host.lastIndexOf('.') + 1))) return undefined;
  if (port !== undefined && (Number(port) > 65535 || port === DEFAULT_PORTS[lowerScheme])) return undefined;
  if (/\/\.{1,2}(?=\/|$)/.test(path)) return undefined;
  return `${lowerScheme}://${host.toLowerCase()}${port === undefined ? '' : `:${port}`}${path || '/'}${query ?? ''}`;
}

/** Parsed by the pinned `whatwg-url` package (hosts through the same `tr46`), not the runtime's parser. */
function normalizeUrl(key: ObjectKey): string {
  const plain = plainUrlHref(key.value);
  if (plain !== undefined) return plain;
  let url: URL;
  try {
    url = new URL(key.value);
  } catch {
    throw invalidKeyFormat(key, 'not an absolute URL');
  }
  if (url.hostname === '') throw invalidKeyFormat(key, 'the URL has no host');
  return url.href;
}

/**
 * An IPv4 address in its stored form (four decimal octets of 0–255, no leading zero): the text the full
 * parse would give back, told by one test. indicators.spec.ts holds it to the parser.
 */
export const STORED_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Strict textual forms only: dotted-quad IPv4 (no octal, hex or short forms), IPv6 without a zone. */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(':') && !text.includes('%') && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return undefined;
}

/** RFC 5952 text; IPv4-mapped addresses keep the dotted-quad tail its §5 recommends (`::ffff:1.2.3.4`). */
function addressText(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv4') return address.toString();
  const v6 = address as ipaddr.IPv6;
  return v6.isIPv4MappedAddress() ? `::ffff:${v6.toIPv4Address().toString()}` : v6.toRFC5952String();
}

function normalizeIpAddress(key: ObjectKey): string {
  if (STORED_IPV4.test(key.value)) return key.value;
  const address = parseAddress(key.value);
  if (!address) throw invalidKeyFormat(key, 'not an IPv4 or IPv6 address');
  return addressText(address);
}

function normalizeIpNetwork(key: ObjectKey): string {
  const match = /^([^/]+)\/(0|[1-9]\d{0,2})$/.exec(key.value);
  const address = match ? parseAddress(match[1]) : undefined;
  if (!match || !address) throw invalidKeyFormat(key, 'not a CIDR network addr/prefix');
  const prefix = Number(match[2]);
  const bits = address.kind() === 'ipv4' ? 32 : 128;
  if (prefix > bits) throw invalidKeyFormat(key, `the prefix length exceeds ${bits}`);
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${(address as ipaddr.IPv6).toNormalizedString()}/${prefix}`);
  if (network.toString() !== address.toString()) throw invalidKeyFormat(key, 'host bits are set');
  return `${addressText(address)}/${prefix}`;
}

/** Validates one key and returns it in its stored form (decisions §7 table); 422 InvalidKeyFormat otherwise. */
export function normalizeKey(key: ObjectKey): ObjectKey {
  let value: string;
  const hashLength = HASH_LENGTHS[key.type];
  if (hashLength !== undefined) {
    if (key.value.length !== hashLength || !/^[0-9a-fA-F]+$/.test(key.value)) {
      throw invalidKeyFormat(key, `expected ${hashLength} hexadecimal digits`);
    }
    value = key.value.toLowerCase();
  } else if (key.type === 'DomainName') {
    value = normalizeDomainName(key);
  } else if (key.type === 'URL') {
    value = normalizeUrl(key);
  } else if (key.type === 'IPAddress') {
    value = normalizeIpAddress(key);
  } else if (key.type === 'IPNetwork') {
    value = normalizeIpNetwork(key);
  } else {
    throw invalidKeyFormat(key, 'unknown key type');
  }
  if (value.length > MAX_KEY_VALUE_LENGTH) {
    throw invalidKeyFormat(key, `longer than ${MAX_KEY_VALUE_LENGTH} characters once normalised`);
  }
  return { type: key.type, value };
}

/**
 * Normalises every key, merges exact duplicates (compared after normalisation, first occurrence kept) and
 * enforces the key-set rules: File → one or more hash keys, at most one per hash type; any other object
 * type → exactly one key of the same-named type. 422 InvalidKeyFormat / InvalidKeySet otherwise.
 */
export function normalizeKeySet(type: ObjectType, keys: ObjectKey[]): ObjectKey[] {
  const unique = new Map<string, ObjectKey>();
  for (const key of keys.map(normalizeKey)) unique.set(`${key.type}\n${key.value}`, key);
  const result = [...unique.values()];
  if (result.length === 0) throw invalidKeySet('an object needs at least one key');
  if (type === 'File') {
    const seen = new Set<KeyType>();
    for (const key of result) {
      if (!isHashKeyType(key.type)) throw invalidKeySet(`a File takes only hash keys, not ${key.type}`);
      if (seen.has(key.type)) throw invalidKeySet(`a File takes at most one ${key.type} key`);
      seen.add(key.type);
    }
    return result;
  }
  if (result.length !== 1 || result[0].type !== type) {
    throw invalidKeySet(`a ${type} takes exactly one ${type} key`);
  }
  return result;
}

/**
 * The object type a bare key list describes (task `objectKeys`): hash keys → File; keys all of one other
 * type → that type (duplicates are merged later by normalizeKeySet); anything else → 422 InvalidKeySet.
 */
export function inferObjectType(keys: ObjectKey[]): ObjectType {
  if (keys.length === 0) throw invalidKeySet('at least one key is required');
  if (keys.every((key) => isHashKeyType(key.type))) return 'File';
  const type = keys[0].type;
  if (isHashKeyType(type) || !keys.every((key) => key.type === type)) {
    throw invalidKeySet('keys must be hash keys of one file, or one key of another type');
  }
  return type as ObjectType;
}
