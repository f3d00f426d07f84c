import ipaddr from 'ipaddr.js';
import { bareKey } from '../common/indicators/bare-key.js';
import { KEY_TYPES, type KeyType, MAX_KEY_VALUE_LENGTH, normalizeKey, type ObjectKey } from '../common/indicators/indicators.js';

/**
 * The matching rules of warninglists (extensions §15), pure: no Nest, no database. Every path (lookup,
 * check, exports, TAXII, writes) asks a `ListSet` built from here, so the rules are written once.
 *
 * Data structures, chosen so that a lookup takes as many probes with a million entries in twenty lists as
 * with ten entries in one: all enabled lists are indexed together (ListIndex, a list added or removed at a
 * cost proportional to its entries), each indexed value leading to the lists that hold it.
 * - `values`: a Map of normalised values (one probe); leading-dot entries go to the Map of domains.
 * - `hostname` (and leading-dot values): a Map of domains, probed with the key's host and each of its
 *   parent domains (at most 127 probes, typically 2–4).
 * - `cidr`: per family, per prefix length a Map from network number (probes: one per prefix length present,
 *   at most 33 or 129), plus per list its networks sorted by start for `overlap` (a binary search).
 * - `substring`: one Map of entries; a value of length L is probed, at the positions where an entry can
 *   start (by its first two characters), with its substrings of the lengths present (at most L × distinct
 *   lengths probes, independent of the entry and list counts).
 * Measured on 1,000,000 entries (issue 36), both on the same 2-core machine under a load average of about
 * 20, so only the ratio means much: PostgreSQL `cidr` with a GiST index (`inet_ops`), 1,000 addresses
 * probed with `EXISTS (... net >>= addr)` in one statement: 400–520 ms; these tables, 1,000 probes: about
 * 20 ms (1M probes 20 s; building the table of 1M /24 networks 23 s). Hostnames, 1M entries: 1M probes of
 * 5-label names 51 s (a 1,000-entry list: 6.5 s: the cost of a bigger Set is cache misses, not work),
 * build 11 s, about 480 MB RSS with the cidr table. So lists are held in memory per instance, parsed once
 * per version of their entries and indexed together, each list joining and leaving the index on its own
 * (see warninglist-matcher.service.ts for how they are kept current).
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

/** A dotted IPv4 address as a number, read in place (compiling a list parses hundreds of thousands). */
function v4Number(text: string, end = text.length): number {
  let value = 0;
  let octet = 0;
  for (let at = 0; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === 46) {
      value = value * 256 + octet;
      octet = 0;
    } else {
      octet = octet * 10 + code - 48;
    }
  }
  return value * 256 + octet;
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
// Probes: what the rules derive from one key, derived once for all lists.

export class KeyProbe {
  private suffixesOf?: string[];
  private networksOf?: Network[];
  private loweredOf?: string;

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

  /** The lowercased value of a domain or URL key (what substrings are sought in); empty for other keys. */
  get lowered(): string {
    this.loweredOf ??= this.key.type === 'DomainName' || this.key.type === 'URL' ? this.key.value.toLowerCase() : '';
    return this.loweredOf;
  }
}

// ---------------------------------------------------------------------------------------------------
// One list's entries, parsed: built once per version of a list's entries, shared by every request.

/** An IPv4 network's canonical text (as `normalizeEntry` stores it) from its numbers. */
const v4Text = (start: number, prefix: number) => `${ipv4Dotted(start)}/${prefix}`;
const ipv4Dotted = (n: number) => `${Math.floor(n / 16777216)}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/**
 * The networks of one family of one list, as listed, and sorted by start for `overlap`. A list answers a
 * key held by several of its networks with the one of the prefix length it listed first (`rank`).
 */
class ListNetworks<N extends number | bigint> {
  readonly starts: N[] = [];
  readonly prefixes: number[] = [];
  /** The entries as listed, unless `format` gives them back from the numbers (IPv4: a string less per network to hold). */
  private readonly texts: string[] = [];
  /** Per prefix length, its position among the list's lengths in the order first listed; -1 when absent. */
  readonly rank: number[];
  private lengths = 0;
  private sortedStarts: N[] = [];
  /** The positions of the networks in start order. */
  private sorted = new Int32Array(0);

  constructor(
    private readonly bits: number,
    private readonly format?: (start: N, prefix: number) => string,
  ) {
    this.rank = new Array<number>(bits + 1).fill(-1);
  }

  add(start: N, prefix: number, text: string): void {
    if (this.rank[prefix] < 0) this.rank[prefix] = this.lengths++;
    this.starts.push(start);
    this.prefixes.push(prefix);
    if (!this.format) this.texts.push(text);
  }

  /** The entry of the network at `at`, as listed. */
  text(at: number): string {
    return this.format ? this.format(this.starts[at], this.prefixes[at]) : this.texts[at];
  }

  /** Sorted by start, equal starts by rank, then as listed: the network `overlap` names is the one it always named. */
  seal(): void {
    const { starts, prefixes, rank } = this;
    const order = Array.from(starts.keys()).sort((a, b) => (starts[a] < starts[b] ? -1 : starts[a] > starts[b] ? 1 : rank[prefixes[a]] - rank[prefixes[b]] || a - b));
    this.sortedStarts = order.map((at) => starts[at]);
    this.sorted = Int32Array.from(order);
  }

  /** A listed network inside `start/prefix` (which holds none of the list's networks whole). */
  overlap(start: N, prefix: number): string | undefined {
    if (prefix === this.bits) return undefined;
    // CIDR blocks are nested or disjoint: a listed network starting inside this one, not holding it, lies inside it.
    const end = (typeof start === 'bigint' ? start + (1n << BigInt(this.bits - prefix)) - 1n : (start as number) + 2 ** (this.bits - prefix) - 1) as N;
    let low = 0;
    let high = this.sortedStarts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.sortedStarts[middle] < start) low = middle + 1;
      else high = middle;
    }
    return low < this.sortedStarts.length && this.sortedStarts[low] <= end ? this.text(this.sorted[low]) : undefined;
  }
}

/** The positions of a list indexed alone (slot 0). */
const ALONE = Int32Array.of(0);

export class CompiledEntries {
  /** `values`: the entries matched whole. */
  readonly exact: string[] = [];
  /** Domains whose subdomains match (`hostname` entries; `values` entries with a leading dot, without it). */
  readonly domains: string[] = [];
  readonly v4 = new ListNetworks<number>(32, v4Text);
  readonly v6 = new ListNetworks<bigint>(128);
  readonly substrings: string[] = [];
  /** Per substring length, its position among the list's lengths in the order first listed. */
  readonly substringRank = new Map<number, number>();
  private alone?: ListIndex;

  /** `entries` are stored (normalised) entries of a list of `kind`. */
  constructor(readonly kind: ListKind, entries: Iterable<string>) {
    for (const entry of entries) this.add(entry);
    this.v4.seal();
    this.v6.seal();
  }

  private add(entry: string): void {
    switch (this.kind) {
      case 'values':
        if (entry.startsWith('.') && entry.length > 1) this.domains.push(entry.slice(1));
        else this.exact.push(entry);
        return;
      case 'hostname':
        this.domains.push(entry);
        return;
      case 'cidr': {
        const slash = entry.indexOf('/');
        if (!entry.includes(':')) {
          this.v4.add(v4Number(entry, slash), Number(entry.slice(slash + 1)), entry);
        } else {
          const [network] = networksOf(entry);
          this.v6.add(network.start as bigint, network.prefix, entry);
        }
        return;
      }
      case 'substring':
        if (!this.substringRank.has(entry.length)) this.substringRank.set(entry.length, this.substringRank.size);
        this.substrings.push(entry);
    }
  }

  /** The first rule of this kind that `key` (normalised) meets (the list alone, as a ListSet of it would answer). */
  match(key: ObjectKey, probe = new KeyProbe(key)): Found | undefined {
    if (!this.alone) {
      this.alone = new ListIndex();
      this.alone.add(this);
    }
    return this.alone.matches(probe, ALONE, 1)[0];
  }
}

// ---------------------------------------------------------------------------------------------------
// The entries of all enabled lists in one index: a key's probes cost the same however many lists there
// are (row 22: probing each list in turn cost about 40 µs a key with 20 lists). Each indexed value leads
// to a chain of postings, one per list holding it; the chains live in typed arrays, not objects. A list
// joins and leaves the index alone, in a slot of its own, at a cost proportional to its entries (a change
// of one list never rebuilds the others'); a ListSet reads only its own lists' slots, in its own order, so
// one index serves every set still in use.

export interface Found {
  entry: string;
  match: MatchKind;
}

const grown = (array: Int32Array) => {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
};

/** Per slot, the position in a set of the list in it; -1 (or beyond the end: a slot added later) for the lists of other sets. */
const positionIn = (positions: Int32Array, slot: number) => (slot < positions.length ? positions[slot] : -1);

/** Chains of postings: the slot of a list holding a value, the next posting, the entry's position in its list. */
class Postings {
  slot = new Int32Array(1024);
  next = new Int32Array(1024);
  entry = new Int32Array(1024);
  private used = 0;
  /** Released postings, chained through `next`. */
  private free = -1;

  /** Slot `slot` holds `value`; false when it already did (a list's postings are added together, so its repeat finds itself at the head). */
  add<K>(table: Map<K, number>, value: K, slot: number, entry = 0): boolean {
    const head = table.get(value);
    if (head !== undefined && this.slot[head] === slot) return false;
    let at = this.free;
    if (at >= 0) {
      this.free = this.next[at];
    } else {
      if (this.used === this.slot.length) [this.slot, this.next, this.entry] = [grown(this.slot), grown(this.next), grown(this.entry)];
      at = this.used++;
    }
    this.slot[at] = slot;
    this.next[at] = head ?? -1;
    this.entry[at] = entry;
    table.set(value, at);
    return true;
  }

  /** Slot `slot` holds `value` no more; false when it did not. */
  remove<K>(table: Map<K, number>, value: K, slot: number): boolean {
    for (let at = table.get(value) ?? -1, before = -1; at >= 0; before = at, at = this.next[at]) {
      if (this.slot[at] !== slot) continue;
      const after = this.next[at];
      if (before >= 0) this.next[before] = after;
      else if (after >= 0) table.set(value, after);
      else table.delete(value);
      this.next[at] = this.free;
      this.free = at;
      return true;
    }
    return false;
  }
}

/** The networks of one family of all lists: per prefix length present, the masked network → its postings. */
class NetworkIndex<N extends number | bigint> {
  private readonly byPrefix = new Map<number, Map<N, number>>();
  private readonly postings = new Postings();
  /** The slots of the lists with networks of this family. */
  private readonly members = new Set<number>();

  constructor(
    private readonly family: (entries: CompiledEntries) => ListNetworks<N>,
    private readonly mask: (value: N, prefix: number) => N,
  ) {}

  get size(): number {
    return this.members.size;
  }

  add(entries: CompiledEntries, slot: number): void {
    const { starts, prefixes } = this.family(entries);
    if (starts.length === 0) return;
    this.members.add(slot);
    for (let at = 0; at < starts.length; at++) {
      let table = this.byPrefix.get(prefixes[at]);
      if (!table) this.byPrefix.set(prefixes[at], (table = new Map()));
      this.postings.add(table, starts[at], slot, at);
    }
  }

  remove(entries: CompiledEntries, slot: number): void {
    if (!this.members.delete(slot)) return;
    const { starts, prefixes } = this.family(entries);
    for (let at = 0; at < starts.length; at++) {
      const table = this.byPrefix.get(prefixes[at]);
      if (table && this.postings.remove(table, starts[at], slot) && table.size === 0) this.byPrefix.delete(prefixes[at]);
    }
  }

  /**
   * Fills `found` for the lists not answered yet: a listed network holding the whole of `start/prefix`
   * (itself included; of several, the one of the length the list listed first), else one inside it.
   */
  match(start: N, prefix: number, lists: readonly (CompiledEntries | undefined)[], positions: Int32Array, found: (Found | undefined)[]): void {
    const { slot, next, entry } = this.postings;
    const best: number[] = [];
    for (const [length, table] of this.byPrefix) {
      if (length > prefix) continue;
      for (let at = table.get(length === prefix ? start : this.mask(start, length)) ?? -1; at >= 0; at = next[at]) {
        const owner = positionIn(positions, slot[at]);
        if (owner < 0 || (found[owner] !== undefined && best[owner] === undefined)) continue;
        const networks = this.family(lists[slot[at]]!);
        const rank = networks.rank[length];
        if (best[owner] === undefined || rank < best[owner]) {
          best[owner] = rank;
          found[owner] = { entry: networks.text(entry[at]), match: 'contained' };
        }
      }
    }
    for (const member of this.members) {
      const owner = positionIn(positions, member);
      if (owner < 0 || found[owner] !== undefined) continue;
      const text = this.family(lists[member]!).overlap(start, prefix);
      if (text !== undefined) found[owner] = { entry: text, match: 'overlap' };
    }
  }
}

/** The entries of lists of every kind, indexed together, a list per slot. */
export class ListIndex {
  /** The list in each slot; undefined for a free slot. */
  private readonly lists: (CompiledEntries | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private readonly exact = new Map<string, number>();
  private readonly exactPostings = new Postings();
  private readonly domains = new Map<string, number>();
  private readonly domainPostings = new Postings();
  private readonly v4 = new NetworkIndex<number>((entries) => entries.v4, maskV4);
  private readonly v6 = new NetworkIndex<bigint>((entries) => entries.v6, maskV6);
  private readonly substrings = new Map<string, number>();
  private readonly substringPostings = new Postings();
  /** Per substring length, how many lists list one of it. */
  private readonly lengthCounts = new Map<number, number>();
  private substringLengths: number[] = [];
  /**
   * A filter of where a substring can start: per low byte of its first character (`single`, entries of one
   * character) or of its first two (`pairs`), how many indexed substrings start so. Most positions of a
   * value start none, and are not sliced.
   */
  private readonly single = new Int32Array(256);
  private readonly pairs = new Int32Array(65536);

  /** Slots are numbered below this: a set's positions cover them. */
  get slots(): number {
    return this.lists.length;
  }

  /** Indexes a list's entries; its slot. */
  add(entries: CompiledEntries): number {
    const slot = this.freeSlots.pop() ?? this.lists.length;
    this.lists[slot] = entries;
    for (const value of entries.exact) this.exactPostings.add(this.exact, value, slot);
    for (const domain of entries.domains) this.domainPostings.add(this.domains, domain, slot);
    this.v4.add(entries, slot);
    this.v6.add(entries, slot);
    for (const substring of entries.substrings) if (this.substringPostings.add(this.substrings, substring, slot)) this.startsOf(substring, 1);
    this.countLengths(entries, 1);
    return slot;
  }

  /** Takes the list in `slot` out (no set that reads it may be used again). */
  remove(slot: number): void {
    const entries = this.lists[slot]!;
    for (const value of entries.exact) this.exactPostings.remove(this.exact, value, slot);
    for (const domain of entries.domains) this.domainPostings.remove(this.domains, domain, slot);
    this.v4.remove(entries, slot);
    this.v6.remove(entries, slot);
    for (const substring of entries.substrings) if (this.substringPostings.remove(this.substrings, substring, slot)) this.startsOf(substring, -1);
    this.countLengths(entries, -1);
    this.lists[slot] = undefined;
    this.freeSlots.push(slot);
  }

  private startsOf(substring: string, change: number): void {
    if (substring.length === 1) this.single[substring.charCodeAt(0) & 255] += change;
    else this.pairs[((substring.charCodeAt(0) & 255) << 8) | (substring.charCodeAt(1) & 255)] += change;
  }

  private countLengths(entries: CompiledEntries, change: number): void {
    for (const length of entries.substringRank.keys()) {
      const count = (this.lengthCounts.get(length) ?? 0) + change;
      if (count === 0) this.lengthCounts.delete(length);
      else this.lengthCounts.set(length, count);
    }
    this.substringLengths = [...this.lengthCounts.keys()];
  }

  /** For each of `count` lists (by their positions, per slot), the first rule of its kind that the probe's key meets, or undefined. */
  matches(probe: KeyProbe, positions: Int32Array, count: number): (Found | undefined)[] {
    const found: (Found | undefined)[] = new Array<Found | undefined>(count).fill(undefined);
    const { key } = probe;
    if (this.exact.size > 0) {
      const { slot, next } = this.exactPostings;
      for (let at = this.exact.get(key.value) ?? -1; at >= 0; at = next[at]) {
        const owner = positionIn(positions, slot[at]);
        if (owner >= 0) found[owner] = { entry: key.value, match: 'exact' };
      }
    }
    if (this.domains.size > 0) this.domainMatches(probe.suffixes, positions, found);
    if (this.v4.size + this.v6.size > 0) {
      // An IPv4-mapped address is asked as IPv6 first: a list answering it so answers no more.
      for (const network of probe.networks) {
        if (network.v6) this.v6.match(network.start as bigint, network.prefix, this.lists, positions, found);
        else this.v4.match(network.start as number, network.prefix, this.lists, positions, found);
      }
    }
    if (this.substrings.size > 0) this.substringMatches(probe.lowered, positions, found);
    return found;
  }

  /** The host or the nearest parent domain listed; `exact` only for the host itself in a hostname list. */
  private domainMatches(suffixes: readonly string[], positions: Int32Array, found: (Found | undefined)[]): void {
    const { slot, next } = this.domainPostings;
    for (let index = 0; index < suffixes.length; index++) {
      for (let at = this.domains.get(suffixes[index]) ?? -1; at >= 0; at = next[at]) {
        const owner = positionIn(positions, slot[at]);
        if (owner < 0 || found[owner] !== undefined) continue;
        const hostname = this.lists[slot[at]]!.kind === 'hostname';
        found[owner] = { entry: hostname ? suffixes[index] : '.' + suffixes[index], match: hostname && index === 0 ? 'exact' : 'subdomain' };
      }
    }
  }

  /** Per list, the first listed substring of the length it listed first that has one, else of the next, and so on. */
  private substringMatches(text: string, positions: Int32Array, found: (Found | undefined)[]): void {
    const { slot, next } = this.substringPostings;
    const best: number[] = [];
    for (let at = 0; at < text.length; at++) {
      const first = text.charCodeAt(at) & 255;
      if (this.single[first] === 0 && (at + 1 === text.length || this.pairs[(first << 8) | (text.charCodeAt(at + 1) & 255)] === 0)) continue;
      for (const length of this.substringLengths) {
        if (at + length > text.length) continue;
        const part = text.slice(at, at + length);
        for (let posting = this.substrings.get(part) ?? -1; posting >= 0; posting = next[posting]) {
          const owner = positionIn(positions, slot[posting]);
          if (owner < 0) continue;
          const rank = this.lists[slot[posting]]!.substringRank.get(length)!;
          // Positions come in order: a later one of the same length never replaces an earlier one.
          if (best[owner] === undefined || rank < best[owner]) {
            best[owner] = rank;
            found[owner] = { entry: part, match: 'substring' };
          }
        }
      }
    }
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

/** The enabled lists at one moment: the one question every path asks. Built once per set of revisions. */
export class ListSet {
  private readonly index: ListIndex;
  /** Per slot of the index, the position of its list here; -1 for other sets' lists. */
  private readonly positions: Int32Array;
  /** Each list's actionRank. */
  private readonly ranks: number[];

  /**
   * `shared`: an index holding the lists already (`slots`: each list's slot), which must keep them while
   * this set is in use; without it the set indexes its lists itself.
   */
  constructor(
    readonly lists: readonly ActiveList[],
    shared?: { index: ListIndex; slots: readonly number[] },
  ) {
    this.index = shared?.index ?? new ListIndex();
    const slots = shared?.slots ?? lists.map((list) => this.index.add(list.entries));
    this.positions = new Int32Array(this.index.slots).fill(-1);
    slots.forEach((slot, position) => (this.positions[slot] = position));
    this.ranks = lists.map((list) => actionRank(list.action));
  }

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
    const floor = actionRank(least);
    const found = this.index.matches(new KeyProbe(key), this.positions, this.lists.length);
    // Plain loops: an export asks once per key it reads, a `check` once per value.
    for (let index = 0; index < found.length; index++) {
      const hit = found[index];
      const list = this.lists[index];
      if (hit !== undefined && this.ranks[index] >= floor && list.keyTypes.has(key.type)) warnings.push({ list: list.name, entry: hit.entry, action: list.action, match: hit.match });
    }
    return warnings;
  }

  /** The first warning of any key of an object from a list acting at `least` or beyond (lists in order, then keys). */
  firstOf(keys: readonly ObjectKey[], least: ListAction): Warning | undefined {
    const floor = actionRank(least);
    const found = keys.map((key) => this.index.matches(new KeyProbe(key), this.positions, this.lists.length));
    for (let index = 0; index < this.lists.length; index++) {
      if (this.ranks[index] < floor) continue;
      const list = this.lists[index];
      for (let at = 0; at < keys.length; at++) {
        const hit = found[at][index];
        if (hit !== undefined && list.keyTypes.has(keys[at].type)) return { list: list.name, entry: hit.entry, action: list.action, match: hit.match };
      }
    }
    return undefined;
  }
}
