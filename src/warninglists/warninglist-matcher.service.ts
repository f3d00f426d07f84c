import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ApiError } from '../common/errors/api-error.js';
import type { KeyType, ObjectKey } from '../common/indicators/indicators.js';
import { InvalidatedCache } from '../database/invalidated-cache.js';
import { InvalidationBus } from '../database/invalidation-bus.js';
import { CompiledEntries, KIND_KEY_TYPES, ListIndex, ListSet, type ActiveList, type ListAction, type ListKind } from './warninglist-matcher/index.js';
import { WarninglistErrors } from './warninglists.errors.js';
import { WarninglistsRepository, type ListState } from './warninglists.repository.js';

/** How often a state read is repeated when a list was replaced between it and the read of its entries. */
const STATE_ATTEMPTS = 5;

class ListMoved extends Error {}

/** The bus topic of the enabled lists' settings, and its one key. */
const TOPIC = 'warninglist';
const ENABLED = 'enabled';

/**
 * The lists that act now, for every path that asks (lookups, checks, exports, TAXII, writes): the area's
 * exported service, so other areas never read its tables.
 *
 * How lists stay current across instances: the read paths (lookups, checks, exports, TAXII) read the enabled
 * lists' settings and revisions per request (one indexed statement over a few rows), so a change committed
 * before a read is seen by it on any instance. A list's entries are compiled only when their revision is
 * one not compiled yet; revisions come from one sequence and are never reused, so compiled entries never
 * need invalidating.
 *
 * All lists' entries live in one ListIndex, a list per slot: a new entries revision joins it (work
 * proportional to that list), and a revision leaves it once no set that reads it can be used any more
 * (a FinalizationRegistry tells: an export may still be streaming with the set it read before a change).
 * So a change of one list, or of any list's settings, never rebuilds the others' postings, and each set
 * answers from exactly its own lists.
 *
 * Writes ask only whether a list rejects on ingest, on every single add (rows 3a and 3c): they take the
 * settings from an InvalidatedCache instead, which every list writer invalidates through the bus inside its
 * transaction (delivered with the commit). So a write reads nothing while no list changes, and the next
 * write after a change, on any instance, reads again. The bus cannot make this exact: an instance applies
 * a notification once its listening connection has delivered it, which PostgreSQL does at the commit, before
 * the writer can answer; a request reaching another instance within that delivery's latency (well under a
 * millisecond, from one client, after a whole HTTP round trip) could still be written with the old lists.
 */
@Injectable()
export class WarninglistMatcherService {
  /** The entries of every list some set still reads, indexed together. */
  private readonly index = new ListIndex();
  /** Per entries revision: its compile, its slot in the index once a set reads it, and how many sets that may still be used read it. */
  private readonly revisions = new Map<string, { entries: Promise<CompiledEntries>; slot?: number; readers: number }>();
  /** Told of each set no request can use any more (holding its entries revisions). */
  private readonly unreachable = new FinalizationRegistry<string[]>((revisions) => this.release(revisions));
  /** The last set built, by the revisions it was built from: most requests find the lists unchanged. */
  private last: { revisions: string; set: ListSet } | undefined;
  /** The enabled lists' settings for writes (see above). */
  private readonly writeStates: InvalidatedCache<ListState[]>;

  constructor(
    private readonly repository: WarninglistsRepository,
    bus: InvalidationBus,
  ) {
    this.writeStates = new InvalidatedCache(bus, TOPIC);
  }

  /** Inside a transaction changing any list: every instance's writes read the lists again once it commits. */
  announceChange(manager: EntityManager): Promise<void> {
    return this.writeStates.publish(manager, ENABLED);
  }

  /** After such a commit, before answering: this instance at once. */
  changed(): void {
    this.writeStates.evictLocally(ENABLED);
  }

  async current(): Promise<ListSet> {
    return this.setOf(await this.repository.enabledStates());
  }

  /** The set of lists in `states`; read again when a list was replaced between that read and the read of its entries. */
  private async setOf(first: ListState[]): Promise<ListSet> {
    for (let attempt = 1, states = first; ; attempt++, states = await this.repository.enabledStates()) {
      // `revision` moves with every change of a list, so equal revisions mean the same lists and entries.
      const revisions = states.map((state) => `${state.id}:${state.revision}`).join(',');
      if (this.last?.revisions === revisions) return this.last.set;
      try {
        const lists = await Promise.all(states.map((state) => this.activeList(state)));
        const read = states.map((state) => state.entriesRevision);
        const slots = lists.map((list, at) => this.slotOf(read[at], list.entries));
        const set = new ListSet(lists, { index: this.index, slots });
        for (const revision of read) this.revisions.get(revision)!.readers++;
        this.unreachable.register(set, read);
        // A compile no set read (its list changed again meanwhile) is dropped; another call still reading it compiles it into a record of its own.
        for (const [revision, record] of this.revisions) if (record.readers === 0 && record.slot === undefined) this.revisions.delete(revision);
        this.last = { revisions, set };
        return set;
      } catch (error) {
        if (!(error instanceof ListMoved) || attempt === STATE_ATTEMPTS) throw error;
      }
    }
  }

  /** Whether any enabled list acts at `action` or beyond: writes skip the matching when none does. */
  async actsAt(action: ListAction): Promise<ListSet | undefined> {
    const set = await this.current();
    return set.actsAt(action) ? set : undefined;
  }

  /**
   * The write seam (`rejectOnIngest`): for the key sets of one write request's objects, in order, the
   * refusal of each (422 Warninglisted naming the list) or undefined. One call per request, whatever its
   * size; nothing is read (the settings are cached, see above) nor matched when no enabled list rejects.
   */
  async refusals(keySets: readonly (readonly ObjectKey[])[]): Promise<(ApiError | undefined)[]> {
    const states = (await this.writeStates.get(ENABLED, () => this.repository.enabledStates()))!;
    const rejecting = states.some((state) => state.action === 'rejectOnIngest');
    const lists = rejecting ? await this.setOf(states) : undefined;
    return keySets.map((keys) => {
      const warning = lists?.firstOf(keys, 'rejectOnIngest');
      return warning && WarninglistErrors.warninglisted(warning);
    });
  }

  /** The slot of a revision's entries, indexed at the first set that reads them (synchronously: no request sees the index half changed). */
  private slotOf(revision: string, entries: CompiledEntries): number {
    let record = this.revisions.get(revision);
    if (!record) this.revisions.set(revision, (record = { entries: Promise.resolve(entries), readers: 0 }));
    record.slot ??= this.index.add(entries);
    return record.slot;
  }

  /** Sets gone: a revision no set reads any more leaves the index. */
  private release(revisions: readonly string[]): void {
    for (const revision of revisions) {
      const record = this.revisions.get(revision);
      if (!record || --record.readers > 0) continue;
      if (record.slot !== undefined) this.index.remove(record.slot);
      this.revisions.delete(revision);
    }
  }

  private async activeList(state: ListState): Promise<ActiveList> {
    let entries = this.revisions.get(state.entriesRevision)?.entries;
    if (!entries) {
      entries = this.compile(state);
      const record = { entries, readers: 0 };
      this.revisions.set(state.entriesRevision, record);
      entries.catch(() => this.revisions.get(state.entriesRevision) === record && this.revisions.delete(state.entriesRevision));
    }
    const kind = state.kind as ListKind;
    return {
      name: state.name,
      revision: state.revision,
      action: state.action as ListAction,
      keyTypes: new Set((state.keyTypes as KeyType[] | null) ?? KIND_KEY_TYPES[kind]),
      entries: await entries,
    };
  }

  private async compile(state: ListState): Promise<CompiledEntries> {
    const values = await this.repository.entries(state.id, state.entriesRevision);
    if (values === undefined) throw new ListMoved();
    return new CompiledEntries(state.kind as ListKind, values);
  }
}
