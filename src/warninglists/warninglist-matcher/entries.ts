import ipaddr from 'ipaddr.js';
import { bareKey } from '../../common/indicators/bare-key.js';
import { MAX_KEY_VALUE_LENGTH, normalizeKey } from '../../common/indicators/indicators.js';
import type { ListKind } from './kinds.js';

// Entries: normalised as keys are.

/** A refused entry: its reason (the caller adds its position). */
export class EntryError extends Error {}

function domainOf(text: string): string {
  return normalizeKey({ type: 'DomainName', value: text }).value;
}

/** An address or CIDR network, host bits cleared (published lists carry `10.1.2.3/8`), in the key's canonical text. */
function networkEntry(text: string): string {
  const [address, prefix, ...rest] = text.split('/');
  if (rest.length > 0 || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) throw new EntryError('not an IP address or CIDR network');
  let canonical: string;
  try {
    canonical = normalizeKey({ type: 'IPAddress', value: address }).value;
  } catch {
    throw new EntryError('not an IP address or CIDR network');
  }
  const parsed = ipaddr.parse(canonical);
  const bits = parsed.kind() === 'ipv4' ? 32 : 128;
  const length = prefix === undefined ? bits : Number(prefix);
  if (length > bits) throw new EntryError(`the prefix length exceeds ${bits}`);
  const network =
    parsed.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${canonical}/${length}`) : ipaddr.IPv6.networkAddressFromCIDR(`${canonical}/${length}`);
  return normalizeKey({ type: 'IPNetwork', value: `${network.toString()}/${length}` }).value;
}

/**
 * One entry in its stored form, or EntryError. `hostname`: a domain (`*.` or `.` before it is accepted:
 * the kind matches subdomains anyway). `values`: a value typed and normalised as a key is when it is one
 * (a leading dot kept: it matches subdomains), other text as given (MISP string lists hold free text).
 */
export function normalizeEntry(kind: ListKind, raw: unknown): string {
  if (typeof raw !== 'string') throw new EntryError('an entry is a string');
  const text = raw.trim();
  if (text === '') throw new EntryError('an entry is not empty');
  if (text.length > MAX_KEY_VALUE_LENGTH) throw new EntryError(`an entry has at most ${MAX_KEY_VALUE_LENGTH} characters`);
  switch (kind) {
    case 'cidr':
      return networkEntry(text);
    case 'hostname':
      try {
        return domainOf(text.replace(/^\*?\./, ''));
      } catch {
        throw new EntryError('not a host name');
      }
    case 'substring':
      return text.toLowerCase();
    case 'values': {
      if (text.startsWith('.') && text.length > 1) {
        try {
          return '.' + domainOf(text.slice(1));
        } catch {
          return text;
        }
      }
      try {
        return normalizeKey(bareKey(text)).value;
      } catch {
        return text;
      }
    }
  }
}
