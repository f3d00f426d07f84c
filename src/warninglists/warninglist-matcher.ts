import ipaddr from 'ipaddr.js';
import { bareKey } from '../common/indicators/bare-key.js';
import { KEY_TYPES, type KeyType, MAX_KEY_VALUE_LENGTH, normalizeKey, type ObjectKey } from '../common/indicators/indicators.js';

/**
 * The matching rules of warninglists (extensions §15), pure: no Nest, no database. Every path (lookup,
 * check, exports, TAXII, writes) asks a `ListSet` built from here, so the rules are written once.
 *
 * Data structures, chosen so that a lookup takes as many probes with a million entries as with ten:
 * - `values`: a Set of normalised values (one probe); leading-dot entries go to a Set of domains.
 * - `hostname` (and leading-dot values): a Set of domains, probed with the key's host and each of its
 *   parent domains (at most 127 probes, typically 2–4).
 * - `cidr`: per family, per prefix length a Map from network number to entry (probes: one per prefix
 *   length present, at most 33 or 129), plus the networks sorted by start for `overlap` (a binary search).
 * - `substring`: per entry length a Set of entries; a value of length L is probed with each of its
 *   substrings of the lengths present (L × distinct lengths probes, independent of the entry count).
 * Measured on 1,000,000 entries (issue 36), both on the same 2-core machine under a load average of about
 * 20, so only the ratio means much: PostgreSQL `cidr` with a GiST index (`inet_ops`), 1,000 addresses
 * probed with `EXISTS (... net >>= addr)` in one statement: 400–520 ms; these tables, 1,000 probes: about
 * 20 ms (1M probes 20 s; building the table of 1M /24 networks 23 s). Hostnames, 1M entries: 1M probes of
 * 5-label names 51 s (a 1,000-entry list: 6.5 s: the cost of a bigger Set is cache misses, not work),
 * build 11 s, about 480 MB RSS with the cidr table. So lists are held in memory per instance, compiled once
 * per version of their entries (see warninglist-matcher.service.ts for how they are kept current).
 */

export const LIST_KINDS = ['values', 'cidr', 'hostname', 'substring'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

/** Each action does what the ones before it do, and more. */
export const LIST_ACTIONS = ['annotate', 'excludeFromExport', 'rejectOnIngest'] as const;
export type ListAction = (typeof LIST_ACTIONS)[number];
export const actionRank = (action: ListAction): number => LIST_ACTIONS.indexOf(action);

export const MATCH_KINDS = ['exact', 'subdomain', 'contained', 'overlap', 'substring'] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

export interface Warning {
  list: string;
  entry: string;
  action: ListAction;
  match: MatchKind;
}

/** The key types each kind can match (a list's default `keyTypes`). */
export const KIND_KEY_TYPES: Record<ListKind, readonly KeyType[]> = {
  values: KEY_TYPES,
  cidr: ['IPAddress', 'IPNetwork', 'URL'],
  hostname: ['DomainName', 'URL'],
  substring: ['DomainName', 'URL'],
};

/** A refused entry: its reason (the caller adds its position). */
export class EntryError extends Error {}

// ---------------------------------------------------------------------------------------------------
// Entries: normalised as keys are.

const stripDot = (value: string) => (value.endsWith('.') ? value.slice(0, -1) : value);

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
  const network = parsed.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${canonical}/${length}`) : ipaddr.IPv6.networkAddressFromCIDR(`${canonical}/${length}`);
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

// ---------------------------------------------------------------------------------------------------
// Addresses as numbers.

interface Network {
  v6: boolean;
  /** First address: a number for IPv4 (exact below 2^53), a bigint for IPv6. */
  start: number | bigint;
  prefix: number;
}

function v4Number(text: string): number {
  const [a, b, c, d] = text.split('.').map(Number);
  return ((a * 256 + b) * 256 + c) * 256 + d;
}

function v6Number(address: ipaddr.IPv6): bigint {
  let value = 0n;
  for (const part of address.parts) value = (value << 16n) | BigInt(part);
  return value;
}

function maskV4(value: number, prefix: number): number {
  const size = 2 ** (32 - prefix);
  return Math.floor(value / size) * size;
}

function maskV6(value: bigint, prefix: number): bigint {
  const shift = BigInt(128 - prefix);
  return (value >> shift) << shift;
}

/**
 * The network of a canonical address or network text; an IPv4-mapped IPv6 one (`::ffff:10.1.2.3`) also
 * as the IPv4 it maps, so that an IPv4 list catches it.
 */
function networksOf(text: string): Network[] {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  if (!address.includes(':')) {
    return [{ v6: false, start: v4Number(address), prefix: slash < 0 ? 32 : Number(text.slice(slash + 1)) }];
  }
  const prefix = slash < 0 ? 128 : Number(text.slice(slash + 1));
  const parsed = ipaddr.IPv6.parse(address);
  const networks: Network[] = [{ v6: true, start: v6Number(parsed), prefix }];
  if (parsed.isIPv4MappedAddress() && prefix >= 96) {
    networks.push({ v6: false, start: v4Number(parsed.toIPv4Address().toString()), prefix: prefix - 96 });
  }
  return networks;
}

/** The host of a normalised URL (brackets of an IPv6 host removed). */
function urlHost(url: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(url);
  if (!match) return undefined;
  return match[1].startsWith('[') ? match[1].slice(1, -1) : match[1];
}

const isAddressText = (host: string) => host.includes(':') || /^\d+\.\d+\.\d+\.\d+$/.test(host);

// ---------------------------------------------------------------------------------------------------
// Probes: what the rules derive from one key, derived once however many lists ask (row 22: with 20 lists,
// parsing a key's networks, host and parent domains once per list was most of a lookup's matching time).

export class KeyProbe {
  private suffixesOf?: string[];
  private networksOf?: Network[];
  private lowered?: string;
  private readonly parts = new Map<number, string[]>();

  constructor(readonly key: ObjectKey) {}

  /** The host of a domain or URL key (not an address) and each parent domain, the host first; empty when none. */
  get suffixes(): string[] {
    if (this.suffixesOf === undefined) {
      const { key } = this;
      const host = key.type === 'DomainName' ? key.value : key.type === 'URL' ? urlHost(key.value) : undefined;
      this.suffixesOf = [];
      if (host !== undefined && host !== '' && !isAddressText(host)) {
        const name = stripDot(host);
        for (let at = 0; at >= 0; at = name.indexOf('.', at) + 1 || -1) this.suffixesOf.push(at === 0 ? name : name.slice(at));
      }
    }
    return this.suffixesOf;
  }

  /** The networks an address, network or URL with an address host stands for; empty when none. */
  get networks(): Network[] {
    if (this.networksOf === undefined) {
      const { key } = this;
      let text: string | undefined = key.value;
      if (key.type === 'URL') {
        const host = urlHost(key.value);
        text = host !== undefined && isAddressText(host) ? host : undefined;
      } else if (key.type !== 'IPAddress' && key.type !== 'IPNetwork') {
        text = undefined;
      }
      try {
        this.networksOf = text === undefined ? [] : networksOf(text);
      } catch {
        this.networksOf = [];
      }
    }
    return this.networksOf;
  }

  /** The substrings of `length` of the lowercased value of a domain or URL key, in order. */
  partsOf(length: number): string[] {
    let parts = this.parts.get(length);
    if (parts === undefined) {
      this.lowered ??= this.key.type === 'DomainName' || this.key.type === 'URL' ? this.key.value.toLowerCase() : '';
      parts = [];
      for (let at = 0; at + length <= this.lowered.length; at++) parts.push(this.lowered.slice(at, at + length));
      this.parts.set(length, parts);
    }
    return parts;
  }
}

// ---------------------------------------------------------------------------------------------------
// Compiled entries: built once per version of a list's entries, shared by every request.

/** The networks of one family: per prefix length the listed networks, and all of them sorted by start. */
class NetworkTable<N extends number | bigint> {
  readonly byPrefix = new Map<number, Map<N, string>>();
  private starts: N[] = [];
  private entries: string[] = [];

  constructor(private readonly mask: (value: N, prefix: number) => N, private readonly bits: number) {}

  add(start: N, prefix: number, entry: string): void {
    let table = this.byPrefix.get(prefix);
    if (!table) this.byPrefix.set(prefix, (table = new Map()));
    if (!table.has(start)) table.set(start, entry);
  }

  seal(): void {
    const all: [N, string][] = [];
    for (const table of this.byPrefix.values()) for (const [start, entry] of table) all.push([start, entry]);
    all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.starts = all.map(([start]) => start);
    this.entries = all.map(([, entry]) => entry);
  }

  /** A listed network holding the whole of `start/prefix` (itself included), or one inside it. */
  match(start: N, prefix: number): { entry: string; match: MatchKind } | undefined {
    for (const [length, table] of this.byPrefix) {
      if (length > prefix) continue;
      const entry = table.get(length === prefix ? start : this.mask(start, length));
      if (entry !== undefined) return { entry, match: 'contained' };
    }
    if (prefix === this.bits) return undefined;
    // CIDR blocks are nested or disjoint: a listed network starting inside this one, not holding it, lies inside it.
    const end = (typeof start === 'bigint' ? start + (1n << BigInt(this.bits - prefix)) - 1n : (start as number) + 2 ** (this.bits - prefix) - 1) as N;
    let low = 0;
    let high = this.starts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.starts[middle] < start) low = middle + 1;
      else high = middle;
    }
    return low < this.starts.length && this.starts[low] <= end ? { entry: this.entries[low], match: 'overlap' } : undefined;
  }
}

export class CompiledEntries {
  private readonly exact = new Set<string>();
  /** Domains whose subdomains match; the value is the entry as listed (a leading dot for `values`). */
  private readonly domains = new Map<string, string>();
  private readonly v4 = new NetworkTable<number>(maskV4, 32);
  private readonly v6 = new NetworkTable<bigint>(maskV6, 128);
  private readonly substrings = new Map<number, Set<string>>();

  /** `entries` are stored (normalised) entries of a list of `kind`. */
  constructor(readonly kind: ListKind, entries: Iterable<string>) {
    for (const entry of entries) this.add(entry);
    this.v4.seal();
    this.v6.seal();
  }

  private add(entry: string): void {
    switch (this.kind) {
      case 'values':
        if (entry.startsWith('.') && entry.length > 1) this.domains.set(entry.slice(1), entry);
        else this.exact.add(entry);
        return;
      case 'hostname':
        this.domains.set(entry, entry);
        return;
      case 'cidr':
        for (const network of networksOf(entry).slice(0, 1)) {
          if (network.v6) this.v6.add(network.start as bigint, network.prefix, entry);
          else this.v4.add(network.start as number, network.prefix, entry);
        }
        return;
      case 'substring': {
        let set = this.substrings.get(entry.length);
        if (!set) this.substrings.set(entry.length, (set = new Set()));
        set.add(entry);
      }
    }
  }

  /** The first rule of this kind that `key` (normalised) meets; `probe` derives from it what other lists derived too. */
  match(key: ObjectKey, probe = new KeyProbe(key)): { entry: string; match: MatchKind } | undefined {
    switch (this.kind) {
      case 'values':
        if (this.exact.has(key.value)) return { entry: key.value, match: 'exact' };
        return this.domainMatch(probe, false);
      case 'hostname':
        return this.domainMatch(probe, true);
      case 'cidr':
        return this.networkMatch(probe);
      case 'substring':
        return this.substringMatch(probe);
    }
  }

  /** The host of a domain or URL key, or a parent domain of it, listed; `exact` only for the host itself in a hostname list. */
  private domainMatch(probe: KeyProbe, exactWhenEqual: boolean): { entry: string; match: MatchKind } | undefined {
    if (this.domains.size === 0) return undefined;
    const { suffixes } = probe;
    for (let index = 0; index < suffixes.length; index++) {
      const entry = this.domains.get(suffixes[index]);
      if (entry !== undefined) return { entry, match: exactWhenEqual && index === 0 ? 'exact' : 'subdomain' };
    }
    return undefined;
  }

  private networkMatch(probe: KeyProbe): { entry: string; match: MatchKind } | undefined {
    for (const network of probe.networks) {
      const found = network.v6 ? this.v6.match(network.start as bigint, network.prefix) : this.v4.match(network.start as number, network.prefix);
      if (found) return found;
    }
    return undefined;
  }

  private substringMatch(probe: KeyProbe): { entry: string; match: MatchKind } | undefined {
    for (const [length, set] of this.substrings) {
      for (const part of probe.partsOf(length)) if (set.has(part)) return { entry: part, match: 'substring' };
    }
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------
// The lists that act now.

export interface ActiveList {
  name: string;
  /** Moves with every change of the list (a part of the ETags of exports). */
  revision: string;
  action: ListAction;
  keyTypes: ReadonlySet<KeyType>;
  entries: CompiledEntries;
}

/** The enabled lists at one moment: the one question every path asks. */
export class ListSet {
  constructor(readonly lists: readonly ActiveList[]) {}

  /** Whether any list acts at `action` or beyond (else a path can skip asking). */
  actsAt(action: ListAction): boolean {
    return this.lists.some((list) => actionRank(list.action) >= actionRank(action));
  }

  /** The key types the lists acting at `least` or beyond check: the only keys a path needs to ask about. */
  keyTypesAt(least: ListAction): KeyType[] {
    const types = new Set<KeyType>();
    for (const list of this.lists) if (actionRank(list.action) >= actionRank(least)) for (const type of list.keyTypes) types.add(type);
    return [...types];
  }

  /** The state of the lists acting at `least` or beyond, as text: equal texts, equal answers (a part of export tags). */
  stateAt(least: ListAction): string {
    return this.lists.filter((list) => actionRank(list.action) >= actionRank(least)).map((list) => list.revision).join(',');
  }

  /** Every warning of a normalised key, from the lists acting at `least` or beyond, in list order. */
  warningsOf(key: ObjectKey, least: ListAction = 'annotate'): Warning[] {
    const warnings: Warning[] = [];
    const probe = new KeyProbe(key);
    for (const list of this.lists) {
      if (actionRank(list.action) < actionRank(least) || !list.keyTypes.has(key.type)) continue;
      const found = list.entries.match(key, probe);
      if (found) warnings.push({ list: list.name, entry: found.entry, action: list.action, match: found.match });
    }
    return warnings;
  }

  /** The first warning of any key of an object from a list acting at `least` or beyond. */
  firstOf(keys: readonly ObjectKey[], least: ListAction): Warning | undefined {
    const probes = keys.map((key) => new KeyProbe(key));
    for (const list of this.lists) {
      if (actionRank(list.action) < actionRank(least)) continue;
      for (const [index, key] of keys.entries()) {
        if (!list.keyTypes.has(key.type)) continue;
        const found = list.entries.match(key, probes[index]);
        if (found) return { list: list.name, entry: found.entry, action: list.action, match: found.match };
      }
    }
    return undefined;
  }
}
