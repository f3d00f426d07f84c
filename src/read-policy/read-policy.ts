/**
 * The read policy: what one request may see of the stored objects and which of them it asked for, built once
 * per request (ReadPolicies.of) from the caller and the query, and passed to every reader of objects as its
 * first parameter (listing, exports, TAXII, lookup, network search, provenance, sightings, the console), as
 * a WriteOrigin is to every writer. A reader never decides these rules itself: it embeds `conditions` in its
 * statement, puts `tagKey` in its ETag and asks `exclusion` what to leave out and count. A new filter is one
 * change here (CONTRIBUTING.md, "The read policy").
 */
import { BUILTIN_RESOURCES, type Principal } from '../common/guard/access.js';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { RED, type TlpRank } from '../common/markings/tlp.js';
import { scoreSql } from '../scoring/score-sql.js';
import { isFiltered, NO_SIGHTING_FILTER, type SightingFilter } from '../sightings/sighting-filter.js';
import { sightingConditions } from '../sightings/sighting-sql.js';
import type { ListSet, Warning } from '../warninglists/warninglist-matcher/index.js';

/**
 * The collections a caller may read (decisions §3), as SQL parameters: all (`ReadChildren` on intel), or those
 * whose auth resource it may `Read`. The collections listing, lookups and sightings filter with exactly this.
 */
export interface ReadScope {
  readsAll: boolean;
  readable: number[];
}

export function readScopeOf(principal: Principal): ReadScope {
  return {
    readsAll: principal.hasDirect(BUILTIN_RESOURCES.intel.id, 'ReadChildren'),
    readable: [...principal.permissions].filter(([, actions]) => actions.has('Read')).map(([id]) => id),
  };
}

/** `apply`: objects on a list acting at `excludeFromExport` or beyond are left out (and counted); `ignore`: kept. */
export const WARNINGLIST_MODES = ['apply', 'ignore'] as const;
export type WarninglistMode = (typeof WARNINGLIST_MODES)[number];

/** What a request chose to narrow its read to: objects that fail a filter are simply not there (never counted). */
export interface ReadFilters {
  sightings: SightingFilter;
  /** `minScore=` (extensions §18): only objects whose score at the policy's `scoreAt` is at least `min`; null when not asked. */
  score: { min: number } | null;
}

export const NO_FILTERS: ReadFilters = { sightings: NO_SIGHTING_FILTER, score: null };

/**
 * The time a read computes scores at (extensions §18): the request's `scoreAt` (`asked`), else the time of the
 * request, one instant for the whole request (ISO 8601 UTC, milliseconds).
 */
export interface ScoreTime {
  at: string;
  asked: boolean;
}

/** The parameters `conditions` may bind; a statement embedding them lists `parameterNames` after its own. */
export type PolicyParameter = 'sightedSince' | 'maxTlp' | 'scoreAt' | 'minScore';

/**
 * The warninglists that leave objects out of a read, as read once for it: the key types they check, whether a
 * key puts its object on one, and their state (`ListSet.stateAt`: moves with every change of those lists).
 */
export interface Exclusion {
  keyTypes: readonly string[];
  excludes: (keys: readonly ObjectKey[]) => boolean;
  state: string;
}

const EXCLUDING = 'excludeFromExport';

/** The SQL part of a policy, which the statements of object reads embed (the bench builds them with UNFILTERED). */
export interface ObjectConditions {
  readonly parameterNames: PolicyParameter[];
  values(): Record<PolicyParameter, unknown>;
  conditions(o: string, $: Partial<Record<PolicyParameter, string>>): string;
}

export class ReadPolicy implements ObjectConditions {
  private lists: Promise<ListSet> | undefined;

  constructor(
    /** The collections the caller may read. */
    readonly scope: ReadScope,
    readonly filters: ReadFilters,
    /**
     * The most restrictive marking the request may see (extensions §19): the key's `maxTLP`, narrowed by the
     * query's. An object marked above it does not exist for the request, on every read: it is a condition of
     * every statement, never a filter applied to rows read.
     */
    readonly ceiling: TlpRank,
    /** Whether warninglists leave objects out of reads that apply them (exports, TAXII). */
    readonly warninglists: WarninglistMode,
    /** Reads the enabled lists; called at most once per policy (a list changed meanwhile acts from the next request). */
    private readonly readLists: () => Promise<ListSet>,
    /** When scores are computed: by the `minScore` filter and by the views that show them (listing, lookup, provenance). */
    readonly scoreAt: ScoreTime = { at: new Date().toISOString(), asked: false },
  ) {}

  /** The same policy with another warninglist mode (a TAXII walk carries its own in `next`); the lists are still read once. */
  withWarninglists(mode: WarninglistMode): ReadPolicy {
    return mode === this.warninglists ? this : new ReadPolicy(this.scope, this.filters, this.ceiling, mode, () => this.listSet(), this.scoreAt);
  }

  /** The same policy under `ceiling` when that is lower (a TAXII walk carries the `maxTLP=` it began with in `next`); never higher. */
  narrowedTo(ceiling: TlpRank | undefined): ReadPolicy {
    if (ceiling === undefined || ceiling >= this.ceiling) return this;
    return new ReadPolicy(this.scope, this.filters, ceiling, this.warninglists, () => this.listSet(), this.scoreAt);
  }

  /** True when a filter narrows the read: the summaries' version (SIGHTING_VERSION) then joins an ETag (a score reads them too). */
  get filtered(): boolean {
    return isFiltered(this.filters.sightings) || this.scored;
  }

  /** True when `minScore` narrows the read: the score inputs' version (SCORE_VERSION) then joins an ETag. */
  get scored(): boolean {
    return this.filters.score !== null;
  }

  /**
   * True when the read's answer moves with time alone: scores filter it at the request's time (no `scoreAt`). Its
   * tag carries that time (tagKey), so it is never answered 304, and nothing is kept for its state.
   */
  get judgedNow(): boolean {
    return this.scored && !this.scoreAt.asked;
  }

  /** Whether the ceiling leaves anything out: a key that may read every marking runs the statement it ran before markings. */
  get restricted(): boolean {
    return this.ceiling < RED;
  }

  /** The names of the parameters `conditions` binds: only those of the rules in use, so an unfiltered read runs today's statement. */
  get parameterNames(): PolicyParameter[] {
    return [
      ...(this.filters.sightings.sightedSince === null ? [] : ['sightedSince' as const]),
      ...(this.restricted ? ['maxTlp' as const] : []),
      ...(this.scored ? (['scoreAt', 'minScore'] as const) : []),
    ];
  }

  /** The values of `parameterNames` (a statement's NamedParameters picks those it lists). */
  values(): Record<PolicyParameter, unknown> {
    return { sightedSince: this.filters.sightings.sightedSince, maxTlp: this.ceiling, scoreAt: this.scoreAt.at, minScore: this.filters.score?.min ?? null };
  }

  /**
   * The filters as SQL conditions (each starting with AND) on the object row `o` (its `keys` jsonb), with the
   * placeholders `$` of `parameterNames`. Empty when nothing narrows the read.
   */
  conditions(o: string, $: Partial<Record<PolicyParameter, string>>): string {
    const ceiling = this.ceilingSql($);
    const marked = ceiling === undefined ? '' : ` AND ${o}.tlp <= ${ceiling}`;
    // `o` must be the intel_object row itself (an alias of the table): the score function takes the whole row.
    const scored = this.scored ? ` AND ${scoreSql(o, $.scoreAt!)} >= ${$.minScore}::float8` : '';
    return `${sightingConditions(o, this.filters.sightings, $.sightedSince ?? '')}${marked}${scored}`;
  }

  /**
   * The parameters a statement over change records binds (the feed, history): the ceiling's alone, when it
   * leaves anything out. Records carry their own markings (before and after the change), which such a
   * statement judges against `ceilingSql`; filters narrow objects, never records.
   */
  get recordParameterNames(): PolicyParameter[] {
    return this.restricted ? ['maxTlp'] : [];
  }

  /** The ceiling as SQL (its placeholder in `$`, cast) when it leaves anything out; undefined for RED. */
  ceilingSql($: Partial<Record<PolicyParameter, string>>): string | undefined {
    return this.restricted ? `${$.maxTlp}::smallint` : undefined;
  }

  /** Whether a record or object marked `tlp` (a rank) is within the ceiling: for what a reader checks outside SQL. */
  sees(tlp: number): boolean {
    return tlp <= this.ceiling;
  }

  /** The policy's part of a cache key or ETag digest: equal keys, the same objects chosen from the same rows. */
  tagKey(): unknown[] {
    // With minScore, the time scores are judged at: an answer judged at the request's time has a tag of its own.
    const scored = this.filters.score === null ? [] : [this.filters.score.min, this.scoreAt.at];
    return [this.filters.sightings, this.warninglists, this.ceiling, ...scored];
  }

  /** Every enabled list, read once for the request (lookups and provenance annotate with them). */
  listSet(): Promise<ListSet> {
    return (this.lists ??= this.readLists());
  }

  /** The warnings of one key, for the reads that annotate (lookup, provenance). */
  async warningsOf(key: ObjectKey): Promise<Warning[]> {
    return (await this.listSet()).warningsOf(key);
  }

  /**
   * What the reads that leave listed objects out (exports, TAXII) leave out: undefined when the request says
   * `warninglists=ignore` or no enabled list acts at `excludeFromExport`. Those objects are counted
   * (`X-Excluded-Count`); the filters' are not.
   */
  async exclusion(): Promise<Exclusion | undefined> {
    if (this.warninglists === 'ignore') return undefined;
    const lists = await this.listSet();
    if (!lists.actsAt(EXCLUDING)) return undefined;
    return {
      keyTypes: lists.keyTypesAt(EXCLUDING),
      excludes: (keys) => lists.firstOf(keys, EXCLUDING) !== undefined,
      state: lists.stateAt(EXCLUDING),
    };
  }
}

/** The conditions of a read that nothing narrows (the bench's raw baselines, a listing read without a policy). */
export const UNFILTERED: ObjectConditions = {
  parameterNames: [],
  values: () => ({ sightedSince: null, maxTlp: RED, scoreAt: null, minScore: null }),
  conditions: () => '',
};
