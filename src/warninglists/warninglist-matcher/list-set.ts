import type { KeyType, ObjectKey } from '../../common/indicators/indicators.js';
import type { CompiledEntries } from './compiled-entries.js';
import { KeyProbe } from './key-probe.js';
import { actionRank, type ListAction, type Warning } from './kinds.js';
import { ListIndex } from './list-index.js';

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
    return this.lists
      .filter((list) => actionRank(list.action) >= actionRank(least))
      .map((list) => list.revision)
      .join(',');
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
      if (hit !== undefined && this.ranks[index] >= floor && list.keyTypes.has(key.type))
        warnings.push({ list: list.name, entry: hit.entry, action: list.action, match: hit.match });
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
