import { extractDomains, extractIPv6s, extractMD5s, extractSHA1s, extractSHA256s, extractSHA512s, extractURLs } from 'ioc-extractor';
import { parse as parseDomain } from 'tldts';
import { normalizeKey, type KeyType, type ObjectKey } from '../common/indicators/indicators.js';
import { decodedRecords, linesOf, type Chunks } from './chunks.js';
import { formOf, type FormatRecord, type ObjectForm } from './forms.js';

/**
 * Text formats: free text (a report, an e-mail: every indicator in it, the import's `format=text`) and
 * indicator lists (one per line with comments, a source of kind `text`). Pure: no I/O.
 */

/**
 * Undoes the usual defanging: `[.]` `(.)` `{.}` `[dot]` `\.`, `[:]`, `[://]`, `[/]`, `[at]` `[@]`, and
 * `hxxp`/`h**p` schemes. Deliberately NOT a dot between spaces (" . "), which ioc-extractor's own refang
 * turns into a dot: in prose that makes names out of sentences ("the end . Then" → `end.then`).
 */
export function refang(text: string): string {
  return text
    .replace(/\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)|\{dot\}|\\\./gi, '.')
    .replace(/\[:\/\/\]|\(:\/\/\)/g, '://')
    .replace(/\[:\]|\(:\)|\{:\}/g, ':')
    .replace(/\[\/\]|\(\/\)/g, '/')
    .replace(/\[at\]|\(at\)|\{at\}|\[@\]|\(@\)/gi, '@')
    .replace(/\bh(?:xx|\*\*)p(s?):\/\//gi, 'http$1://');
}

/** Versions (`version 1.2.3.4`, `v10.0.0.1`, `build 4.4.0.1`) are not addresses: blanked before extraction. */
const VERSION = /\b(?:version|ver|v|release|build|rev)\.?\s*\d+(?:\.\d+)+\b/gi;
/** CIDR networks, taken before addresses so that their address is not also an IPAddress. */
const NETWORK = /(?<![\w.:/])(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7})\/\d{1,3}(?![\w/])/gi;
/** Dotted quads standing alone: ioc-extractor also takes `99.1.1.1` out of `999.1.1.1`. */
const IPV4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)/g;
/**
 * Top-level domains that are also common file extensions: a two-label name ending in one of them
 * (`invoice.zip`, `setup.sh`, `readme.md`) is taken as a file name. Longer names (`cdn.evil.zip`) remain.
 */
const FILE_EXTENSION_TLDS = new Set(['zip', 'mov', 'py', 'sh', 'md', 'rar', 'ps']);

/**
 * A URL as prose ends it: without the sentence's punctuation (`see http://x.example/a.`) or a closing
 * bracket it does not open itself (`(http://x.example/a)`).
 */
export function trimUrl(url: string): string {
  let end = url.length;
  const count = (char: string) => url.slice(0, end).split(char).length - 1;
  for (;;) {
    const last = url[end - 1];
    if (`.,;:!?'"`.includes(last)) end--;
    else if ((last === ')' && count('(') < count(')')) || (last === ']' && count('[') < count(']'))) end--;
    else return url.slice(0, end);
  }
}

/** IPv6 in prose needs three groups: `a::b` or `dead::beef` are more often code or words than addresses. */
const isLikelyIpv6 = (value: string) => value.split(':').filter((group) => group !== '').length >= 3;

/** A host name with a suffix of the ICANN public suffix list (tldts), and not a file name. */
function isKnownDomain(name: string): boolean {
  const parsed = parseDomain(name, { allowPrivateDomains: false });
  if (!parsed.isIcann || parsed.domain === null || parsed.isIp) return false;
  const labels = name.split('.');
  return !(labels.length === 2 && FILE_EXTENSION_TLDS.has(labels[1].toLowerCase()));
}

/** Every http(s) URL up to the next space, blanked in one pass once the URLs are taken. */
const ANY_URL = /\bhttps?:\/\/\S+/gi;

/**
 * Every indicator of a free-form text, each once, as keys in their stored form: hashes (by length: MD5,
 * SHA-1, SHA-256, SHA-512), URLs, domain names with a known public suffix, IPv4/IPv6 addresses and CIDR
 * networks, after refanging. A candidate our own key normalisation refuses is not an indicator. The host
 * of a URL is not listed again on its own (the URL carries it); the domain of a mail address is.
 * Pure: no I/O, so the rules are tested without the service.
 */
export function extractIndicators(input: string): ObjectKey[] {
  return alone(input) ?? extractAll(input);
}

/** The indicators a text may be alone, by the whole text's shape. */
const ALONE: [RegExp, KeyType][] = [
  [/^(?:\d{1,3}\.){3}\d{1,3}$/, 'IPAddress'],
  [/^(?:\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/, 'IPNetwork'],
  [/^[0-9a-f]{32}$/i, 'MD5Hash'],
  [/^[0-9a-f]{40}$/i, 'SHA1Hash'],
  [/^[0-9a-f]{64}$/i, 'SHA256Hash'],
  [/^[0-9a-f]{128}$/i, 'SHA512Hash'],
];

/**
 * A text that is one address, network or hash and nothing else (a line of most lists, extensions §13),
 * without the extractor's expressions: exactly what `extractAll` finds in it (text.spec.ts checks it), at a
 * small part of the cost. Anything else, or a value the key normalisation refuses, is left to `extractAll`.
 */
function alone(text: string): ObjectKey[] | undefined {
  const type = ALONE.find(([pattern]) => pattern.test(text))?.[1];
  if (type === undefined) return undefined;
  try {
    return [normalizeKey({ type, value: text })];
  } catch {
    return undefined;
  }
}

/** `extractIndicators` without the shortcut of a text that is one indicator alone; exported for its spec. */
export function extractAll(input: string): ObjectKey[] {
  const text = refang(input);
  const found = new Map<string, ObjectKey>();
  const take = (type: KeyType, values: string[], accept: (value: string) => boolean = () => true): string[] => {
    const taken: string[] = [];
    for (const value of values) {
      let key: ObjectKey;
      try {
        key = normalizeKey({ type, value });
      } catch {
        continue;
      }
      if (!accept(key.value)) continue;
      taken.push(value);
      found.set(`${key.type}\n${key.value}`, key);
    }
    return taken;
  };
  const options = { sort: false };
  take('MD5Hash', extractMD5s(text, options));
  take('SHA1Hash', extractSHA1s(text, options));
  take('SHA256Hash', extractSHA256s(text, options));
  take('SHA512Hash', extractSHA512s(text, options));
  take('URL', extractURLs(text, { ...options, strict: false }).map(trimUrl), (value) => {
    const host = new URL(value).hostname;
    return /^[\d.]+$|^\[/.test(host) || isKnownDomain(host);
  });
  // Hosts of URLs are not listed again. The remaining expressions only see the words that can match
  // (whitespace never belongs to an indicator): the library's domain and IPv6 ones cost the most per character.
  let words = text.replace(ANY_URL, ' ').replace(VERSION, ' ').split(/\s+/);
  const networks = new Set(
    take(
      'IPNetwork',
      words
        .filter((word) => word.includes('/'))
        .join(' ')
        .match(NETWORK) ?? [],
    ),
  );
  // A network's address is not also an address.
  if (networks.size > 0) words = words.map((word) => (word.includes('/') ? word.replace(NETWORK, (match) => (networks.has(match) ? ' ' : match)) : word));
  const dotted = words.filter((word) => word.includes('.')).join(' ');
  take('DomainName', extractDomains(dotted, { ...options, strict: false }), isKnownDomain);
  take('IPAddress', dotted.match(IPV4) ?? []);
  const colons = words.filter((word) => word.indexOf(':') !== word.lastIndexOf(':')).join(' ');
  take('IPAddress', extractIPv6s(colons, options), isLikelyIpv6);
  return [...found.values()];
}

/** The forms of every indicator of a free text, each with the given context (the import's `format=text`). */
export function extractForms(text: string, context: Record<string, unknown>): ObjectForm[] {
  return extractIndicators(text).map((key) => formOf(key, context));
}

export const NO_INDICATOR = 'no indicator found in the value';

/** A whole comment line (`#`, `;`), or an inline comment after a space (`1.10.16.0/20 ; SBL256894`). */
const COMMENT = /^[#;].*$|\s[#;].*$/;
/** An address with a port (`198.51.100.7:443`, `[2001:db8::1]:443`): the address is the indicator. */
const ADDRESS_PORT = /^(?:((?:\d{1,3}\.){3}\d{1,3})|\[([0-9a-f:.]+)\]):\d{1,5}$/i;

/**
 * The indicators of one value of a list (a line, a CSV cell, an NDJSON member) as the free-text import
 * finds them, after the port of an `address:port` is dropped. Usually one; none for a non-indicator.
 */
export function valueKeys(raw: string): ObjectKey[] {
  const value = refang(raw.trim());
  const address = ADDRESS_PORT.exec(value);
  return extractIndicators(address === null ? value : (address[1] ?? address[2]));
}

/**
 * An indicator list (a source of kind `text`): one indicator per line, its type found as the free-text
 * import finds it (so a name needs a known public suffix); a line holding more than one gives each. A
 * line with none is rejected with its number.
 */
export function streamTextList(input: Chunks, context: Record<string, unknown>): AsyncGenerator<FormatRecord> {
  return decodedRecords(textListRecords(input, context));
}

async function* textListRecords(input: Chunks, context: Record<string, unknown>): AsyncGenerator<FormatRecord> {
  for await (const { line, text } of linesOf(input)) {
    const value = text.replace(COMMENT, '').trim();
    if (value === '') continue;
    yield* valueRecords(line, value, context);
  }
}

/** The records of one list value: a form per indicator in it, or its rejection. */
export function* valueRecords(line: number, value: string, context: Record<string, unknown>): Generator<FormatRecord> {
  const keys = valueKeys(value);
  if (keys.length === 0) yield { kind: 'rejected', rejection: { line, value, reason: NO_INDICATOR } };
  for (const key of keys) yield { kind: 'form', line, form: formOf(key, context) };
}
