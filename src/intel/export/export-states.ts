import type { TlpRank } from '../../common/markings/tlp.js';
import type { ReadPolicy } from '../../read-policy/read-policy.js';
import type { ExportParams } from './export-formats.js';
import type { ExportPosition } from './export.repository.js';

/** States whose excluded count and marking an instance keeps: a few per exported collection that pollers repeat. */
const COUNTED_STATES = 1_000;
/** States whose excluded ids an instance keeps: the collections exported over and over (firewalls polling). */
const LISTED_STATES = 4;
/** More ids than this are not kept (memory); such an export reads and matches its keys each time. */
const MAX_KEPT_IDS = 100_000;

/**
 * The key of what the exports of one state of a collection hold besides their rows: the objects they leave out
 * and the most restrictive marking among those they hold (`X-TLP-Max`). Both depend only on the live objects
 * (the position's numbers, the same numbers the ETag is made of: equal numbers, the same live objects,
 * CONTRIBUTING.md "Exports"), on the filters that choose which of them the export holds (`keyType`, the read
 * policy's filters and ceiling, with the versions of the sightings and scores they read) and on the excluding lists
 * (`ListSet.stateAt`): all in the ETag too. Not on the format: exports of every format share an entry.
 */
export function exportState(
  { collectionId, params, policy, lists }: { collectionId: number; params: Pick<ExportParams, 'keyType'>; policy: ReadPolicy; lists: string },
  position: ExportPosition,
): string {
  return `${collectionId}:${positionNumbers(policy, position)}:${JSON.stringify([params.keyType, ...policy.tagKey()])}:${lists}`;
}

/**
 * The numbers of a position that name what an export under `policy` holds: the feed's, then, filtered, the
 * version of the sighting summaries (SIGHTING_VERSION) and, filtered by scores, of the other score inputs
 * (SCORE_VERSION): equal numbers, the same inputs, the same scores at the same `scoreAt`.
 */
export function positionNumbers(policy: ReadPolicy, position: ExportPosition): string {
  const sighted = policy.filtered ? `.${position.sightingVersion}` : '';
  const scored = policy.scored ? `.${position.scoreVersion}` : '';
  return `${position.lastSeq}.${position.pending}.${position.expired}${sighted}${scored}`;
}

/**
 * What an instance knows per state (least recently used dropped first): the objects left out, and the
 * marking. No invalidation is needed (nor the bus): a state names one set of live objects and one revision
 * of each list, so neither ever changes; a write or a changed list is another state.
 */
export class ExportStates {
  private readonly counts = new Map<string, number>();
  private readonly ids = new Map<string, readonly string[]>();
  private readonly markings = new Map<string, TlpRank>();

  countOf(state: string): number | undefined {
    return known(this.counts, state, COUNTED_STATES);
  }

  idsOf(state: string): readonly string[] | undefined {
    return known(this.ids, state, LISTED_STATES);
  }

  remember(state: string, ids: readonly string[]): void {
    touch(this.counts, state, ids.length, COUNTED_STATES);
    if (ids.length <= MAX_KEPT_IDS) touch(this.ids, state, ids, LISTED_STATES);
  }

  markingOf(state: string): TlpRank | undefined {
    return known(this.markings, state, COUNTED_STATES);
  }

  rememberMarking(state: string, marking: TlpRank): void {
    touch(this.markings, state, marking, COUNTED_STATES);
  }
}

/** The entry of `key`, made most recently used, when there is one. */
function known<T>(map: Map<string, T>, key: string, bound: number): T | undefined {
  const value = map.get(key);
  if (value !== undefined) touch(map, key, value, bound);
  return value;
}

/** Puts the entry last (most recently used), dropping the first past `bound`. */
function touch<T>(map: Map<string, T>, key: string, value: T, bound: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > bound) map.delete(map.keys().next().value as string);
}
