import { Injectable } from '@nestjs/common';
import type { ApiError } from '../common/errors/api-error.js';
import type { KeyType, ObjectKey } from '../common/indicators/indicators.js';
import { WarninglistErrors } from './warninglists.errors.js';
import { type ActiveList, CompiledEntries, KIND_KEY_TYPES, type ListAction, type ListKind, ListSet } from './warninglist-matcher.js';
import { type ListState, WarninglistsRepository } from './warninglists.repository.js';

/** How often a state read is repeated when a list was replaced between it and the read of its entries. */
const STATE_ATTEMPTS = 5;

class ListMoved extends Error {}

/**
 * The lists that act now, for every path that asks (lookups, checks, exports, TAXII, writes): the area's
 * exported service, so other areas never read its tables.
 *
 * How lists stay current across instances: every call reads the enabled lists' settings and revisions
 * (one indexed statement over a few rows), and compiles a list's entries only when their revision is one
 * it has not compiled yet. Revisions come from one sequence and are never reused, so compiled entries
 * never need invalidating: a change committed before a request is seen by that request on any instance.
 * The invalidation bus was the other choice (no statement per request) but it notifies after the writer
 * has answered, so an instance could serve its next request with the old list; §15 wants the next request.
 */
@Injectable()
export class WarninglistMatcherService {
  /** Compiled entries by entries revision; only those of the last read's lists are kept. */
  private readonly compiled = new Map<string, Promise<CompiledEntries>>();
  /** The last set built, by the revisions it was built from: most requests find the lists unchanged. */
  private last: { revisions: string; set: ListSet } | undefined;

  constructor(private readonly repository: WarninglistsRepository) {}

  async current(): Promise<ListSet> {
    for (let attempt = 1; ; attempt++) {
      const states = await this.repository.enabledStates();
      // `revision` moves with every change of a list, so equal revisions mean the same lists and entries.
      const revisions = states.map((state) => `${state.id}:${state.revision}`).join(',');
      if (this.last?.revisions === revisions) return this.last.set;
      try {
        const lists = await Promise.all(states.map((state) => this.activeList(state)));
        const kept = new Set(states.map((state) => state.entriesRevision));
        for (const revision of this.compiled.keys()) if (!kept.has(revision)) this.compiled.delete(revision);
        this.last = { revisions, set: new ListSet(lists) };
        return this.last.set;
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
   * size; nothing is matched when no enabled list rejects.
   */
  async refusals(keySets: readonly (readonly ObjectKey[])[]): Promise<(ApiError | undefined)[]> {
    const lists = await this.actsAt('rejectOnIngest');
    return keySets.map((keys) => {
      const warning = lists?.firstOf(keys, 'rejectOnIngest');
      return warning && WarninglistErrors.warninglisted(warning);
    });
  }

  private async activeList(state: ListState): Promise<ActiveList> {
    let entries = this.compiled.get(state.entriesRevision);
    if (!entries) {
      entries = this.compile(state);
      this.compiled.set(state.entriesRevision, entries);
      entries.catch(() => this.compiled.delete(state.entriesRevision));
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
