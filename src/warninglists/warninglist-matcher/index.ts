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
 * (see ../warninglist-matcher.service.ts for how they are kept current).
 *
 * One file per concern, each readable alone: `kinds.ts` (what a list is and does, what a warning says),
 * `entries.ts` (an entry normalised as keys are), `addresses.ts` (addresses as numbers), `key-probe.ts`
 * (what the rules derive from one key), `compiled-entries.ts` (one list's entries, parsed), `list-index.ts`
 * (every enabled list in one index) and `list-set.ts` (the lists that act now: the question every path
 * asks). This index is the area's one door to them: importers use it, never a file inside.
 */

export { CompiledEntries } from './compiled-entries.js';
export { EntryError, normalizeEntry } from './entries.js';
export { KeyProbe } from './key-probe.js';
export { actionRank, KIND_KEY_TYPES, LIST_ACTIONS, LIST_KINDS, type ListAction, type ListKind, MATCH_KINDS, type MatchKind, type Warning } from './kinds.js';
export { type Found, ListIndex } from './list-index.js';
export { type ActiveList, ListSet } from './list-set.js';
