import { maskV4, maskV6 } from './addresses.js';
import type { CompiledEntries, ListNetworks } from './compiled-entries.js';
import type { KeyProbe } from './key-probe.js';
import type { MatchKind } from './kinds.js';

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
