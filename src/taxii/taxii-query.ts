import type { TlpRank } from '../common/markings/tlp.js';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { askedCeiling, minScoreOf, scoreTimeOf } from '../read-policy/read-policies.service.js';
import { TAXII_DEFAULT_LIMIT, TAXII_MAX_LIMIT } from './taxii-limits.js';
import { TaxiiErrors } from './taxii.errors.js';

/**
 * The query of a TAXII read (`added_after`, `limit`, `next`, `match[...]`) as a walk: filters, a start and a
 * page size. `next` carries all of them with the collection and the position, so a client that sends only
 * `next` walks the same. Pure functions; malformed input → 400 InvalidQueryArgument (a `maxTLP` that names
 * no TLP level: 400 InvalidData, as on every read that takes it).
 */

/** Which versions: all, or any of first / last / those of given times (UTC, microseconds). */
export type VersionFilter = 'all' | { first: boolean; last: boolean; at: string[] };

export interface WalkFilter {
  addedAfter?: string;
  types?: string[];
  ids?: string[];
  versions: VersionFilter;
  specVersions?: string[];
  /** `ignore`: objects on warninglists acting at `excludeFromExport` are served too (extensions §15), as exports take it. */
  warninglists?: 'ignore';
  /**
   * `maxTLP=`: the walk leaves out what is marked above this level (extensions §19). It only narrows the key's
   * own ceiling, which applies to every page anyway; carried in `next` so that no page of the walk is wider.
   */
  maxTlp?: TlpRank;
  /**
   * `minScore=` (extensions §18) with the time scores are judged at: the request's `scoreAt`, else the time of the
   * walk's first page, carried in `next` so that every page judges at that one time.
   */
  score?: { min: number; at: string };
}

/** After which served object to continue: a feed position and the part of it (0 indicator, 1 observable). */
export interface WalkPosition {
  seq: number;
  part: number;
}

export interface Walk {
  filter: WalkFilter;
  after: WalkPosition;
  limit: number;
}

/** Before everything: position 0 holds the collection's constant objects (parts 0 and 1). */
export const WALK_START: WalkPosition = { seq: 0, part: -1 };

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?Z$/;

/**
 * A STIX/TAXII timestamp (UTC, `Z`) in the one form feed times have: microseconds, six digits. Digits below
 * the microsecond are cut: feed times are whole microseconds, so `> t` and `> cut(t)` select the same ones.
 */
export function microsecondTimestamp(text: string): string | undefined {
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const valid =
    year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
  if (!valid) return undefined;
  const fraction = (match[7] ?? '').slice(0, 6).padEnd(6, '0');
  return `${match.slice(1, 4).join('-')}T${match.slice(4, 7).join(':')}.${fraction}Z`;
}

/** Every value of a `match[...]` parameter, given once with commas or several times. */
function listOf(query: URLSearchParams, name: string, pattern: RegExp): string[] | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return undefined;
  const items = values.flatMap((value) => value.split(','));
  for (const item of items) if (!pattern.test(item)) throw TaxiiErrors.invalidQuery(`${name}: "${item}" is not allowed`);
  return items;
}

function versionsOf(query: URLSearchParams): VersionFilter {
  const values = listOf(query, 'match[version]', /^(?:first|last|all|\d{4}-.+Z)$/);
  if (values === undefined) return { first: false, last: true, at: [] };
  if (values.includes('all')) return 'all';
  const at = values
    .filter((value) => value !== 'first' && value !== 'last')
    .map((value) => {
      const time = microsecondTimestamp(value);
      if (time === undefined) throw TaxiiErrors.invalidQuery(`match[version]: "${value}" is not a timestamp`);
      return time;
    });
  return { first: values.includes('first'), last: values.includes('last'), at };
}

export function limitOf(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null) return TAXII_DEFAULT_LIMIT;
  if (!/^[1-9]\d{0,9}$/.test(raw)) throw TaxiiErrors.invalidQuery('limit must be a positive integer');
  return Math.min(Number(raw), TAXII_MAX_LIMIT);
}

/** `warninglists=apply` (the default) or `ignore`. */
function warninglistsOf(query: URLSearchParams): 'ignore' | undefined {
  const mode = query.get('warninglists');
  if (mode !== null && mode !== 'apply' && mode !== 'ignore') throw TaxiiErrors.invalidQuery('warninglists must be apply or ignore');
  return mode === 'ignore' ? mode : undefined;
}

/** The filters a request states; `fixed` filters (an object's id in its path) are added to them. */
export function filterOf(query: URLSearchParams, fixed: Partial<WalkFilter> = {}): WalkFilter {
  const warninglists = warninglistsOf(query);
  const maxTlp = askedCeiling(query.get('maxTLP') ?? undefined);
  const minScore = minScoreOf(query.get('minScore') ?? undefined);
  const scoreAt = scoreTimeOf(query.get('scoreAt') ?? undefined);
  const addedAfterText = query.get('added_after');
  const addedAfter = addedAfterText === null ? undefined : microsecondTimestamp(addedAfterText);
  if (addedAfterText !== null && addedAfter === undefined) throw TaxiiErrors.invalidQuery('added_after must be a timestamp such as 2030-01-01T00:00:00.000Z');
  return {
    ...(addedAfter !== undefined && { addedAfter }),
    ...(listOf(query, 'match[type]', /^[a-z0-9][a-z0-9-]{0,249}$/) && { types: listOf(query, 'match[type]', /./) }),
    ...(listOf(query, 'match[id]', /^[a-z0-9][a-z0-9-]*--[0-9a-f-]{36}$/) && { ids: listOf(query, 'match[id]', /./) }),
    versions: versionsOf(query),
    ...(listOf(query, 'match[spec_version]', /^\d+\.\d+$/) && { specVersions: listOf(query, 'match[spec_version]', /./) }),
    ...(warninglists && { warninglists }),
    ...(maxTlp !== undefined && { maxTlp }),
    ...(minScore !== undefined && { score: { min: minScore, at: scoreAt.at } }),
    ...fixed,
  };
}

/** The token of `next`: the collection, the position, the filters and the page size. */
interface NextToken {
  c: string;
  s: number;
  p: number;
  f: WalkFilter;
  l: number;
}

const isStringList = (value: unknown) => value === undefined || (Array.isArray(value) && value.every((item) => typeof item === 'string'));

function isNextToken(value: unknown): value is NextToken {
  if (typeof value !== 'object' || value === null) return false;
  const token = value as Partial<NextToken>;
  const filter = token.f as Partial<WalkFilter> | undefined;
  const versions = filter?.versions as VersionFilter | undefined;
  return (
    typeof token.c === 'string' &&
    Number.isSafeInteger(token.s) &&
    token.s! >= 0 &&
    (token.p === 0 || token.p === 1) &&
    Number.isSafeInteger(token.l) &&
    token.l! >= 1 &&
    token.l! <= TAXII_MAX_LIMIT &&
    typeof filter === 'object' &&
    filter !== null &&
    (filter.addedAfter === undefined || (typeof filter.addedAfter === 'string' && microsecondTimestamp(filter.addedAfter) === filter.addedAfter)) &&
    isStringList(filter.types) &&
    isStringList(filter.ids) &&
    isStringList(filter.specVersions) &&
    (filter.warninglists === undefined || filter.warninglists === 'ignore') &&
    (filter.maxTlp === undefined || [0, 1, 2, 3, 4].includes(filter.maxTlp)) &&
    (filter.score === undefined ||
      (typeof filter.score === 'object' &&
        filter.score !== null &&
        typeof filter.score.min === 'number' &&
        filter.score.min >= 0 &&
        filter.score.min <= 100 &&
        typeof filter.score.at === 'string' &&
        !Number.isNaN(Date.parse(filter.score.at)))) &&
    (versions === 'all' ||
      (typeof versions === 'object' &&
        versions !== null &&
        typeof versions.first === 'boolean' &&
        typeof versions.last === 'boolean' &&
        Array.isArray(versions.at) &&
        versions.at.every((at) => typeof at === 'string' && microsecondTimestamp(at) === at)))
  );
}

export function encodeNext(collectionId: string, after: WalkPosition, walk: Walk): string {
  return encodeCursor({ c: collectionId, s: after.seq, p: after.part, f: walk.filter, l: walk.limit } satisfies NextToken);
}

/**
 * The walk a request asks for: from its `next` (which carries everything; 400 when malformed, forged, or of
 * another collection), or from its parameters.
 */
export function walkOf(query: URLSearchParams, collectionId: string, fixed: Partial<WalkFilter> = {}): Walk {
  const next = query.get('next');
  if (next === null) return { filter: filterOf(query, fixed), after: WALK_START, limit: limitOf(query) };
  let token: NextToken;
  try {
    token = decodeCursor(next, isNextToken);
  } catch {
    throw TaxiiErrors.invalidQuery('next is not a value this server gave');
  }
  if (token.c !== collectionId) throw TaxiiErrors.invalidQuery('next belongs to another collection');
  const sameFixed = Object.entries(fixed).every(([name, value]) => JSON.stringify(token.f[name as keyof WalkFilter]) === JSON.stringify(value));
  if (!sameFixed) throw TaxiiErrors.invalidQuery('next belongs to another object');
  return { filter: token.f, after: { seq: token.s, part: token.p }, limit: token.l };
}
