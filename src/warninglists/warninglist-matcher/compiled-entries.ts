import type { ObjectKey } from '../../common/indicators/indicators.js';
import { networksOf, v4Number } from './addresses.js';
import { KeyProbe } from './key-probe.js';
import type { ListKind } from './kinds.js';
import { ListIndex, type Found } from './list-index.js';

// One list's entries, parsed: built once per version of a list's entries, shared by every request.

/** An IPv4 network's canonical text (as `normalizeEntry` stores it) from its numbers. */
const v4Text = (start: number, prefix: number) => `${ipv4Dotted(start)}/${prefix}`;
const ipv4Dotted = (n: number) => `${Math.floor(n / 16777216)}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/**
 * The networks of one family of one list, as listed, and sorted by start for `overlap`. A list answers a
 * key held by several of its networks with the one of the prefix length it listed first (`rank`).
 */
export class ListNetworks<N extends number | bigint> {
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
    const order = Array.from(starts.keys()).sort((a, b) =>
      starts[a] < starts[b] ? -1 : starts[a] > starts[b] ? 1 : rank[prefixes[a]] - rank[prefixes[b]] || a - b,
    );
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
  constructor(
    readonly kind: ListKind,
    entries: Iterable<string>,
  ) {
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
