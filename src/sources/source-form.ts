import { isIP } from 'node:net';
import { CommonErrors } from '../common/errors/api-error.js';
import { rankOf, TLP_INPUT_HINT, tlpOf, type Tlp } from '../common/markings/tlp.js';
import {
  CREDIBILITIES,
  CREDIBILITY_SCALES,
  DEFAULT_CREDIBILITY,
  DEFAULT_RELIABILITY,
  RELIABILITIES,
  type Credibility,
  type CredibilityScale,
  type Reliability,
} from '../scoring/admiralty.js';

/** The kinds of extensions §13; `taxii21` and `misp` are always `delta`. */
export const SOURCE_KINDS = ['text', 'csv', 'ndjson', 'taxii21', 'misp'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];
export const SOURCE_MODES = ['snapshot', 'delta'] as const;
export type SourceMode = (typeof SOURCE_MODES)[number];
export const REMOVAL_POLICIES = ['remove', 'afterMissedRuns', 'never'] as const;
export type RemovalPolicy = (typeof REMOVAL_POLICIES)[number];

export const SOURCE_NAME_PATTERN = /^[a-z0-9._-]{1,128}$/;
const MIN_INTERVAL = 60;
const MAX_INTERVAL = 604_800;
/** The members a form may have, per kind beyond the common ones. */
const COMMON = [
  'name',
  'collection',
  'kind',
  'url',
  'enabled',
  'intervalSeconds',
  'mode',
  'removal',
  'context',
  'headers',
  'basicAuth',
  'maxRemovalRatio',
  'minItems',
  'tlp',
  'reliability',
  'credibility',
];
/** The kinds whose records may carry their own credibility in a column or field of theirs (`credibilityField`). */
const RECORD_CREDIBILITY = ['credibilityField', 'credibilityScale'];
const PER_KIND: Record<SourceKind, string[]> = {
  text: [],
  csv: ['valueColumn', 'typeColumn', 'contextColumns', 'delimiter', 'skipLines', ...RECORD_CREDIBILITY],
  ndjson: ['valueField', 'contextFields', ...RECORD_CREDIBILITY],
  taxii21: ['collectionID', 'pageSize'],
  misp: ['toIdsOnly'],
};

/** What a source's runs need, secrets apart: stored as `settings`, shown in its view. */
export interface SourceSettings {
  url: string;
  mode: SourceMode;
  removal: { policy: RemovalPolicy; runs?: number };
  context: Record<string, unknown>;
  /** The names of the headers sent; their values are secrets. */
  headerNames: string[];
  username?: string;
  maxRemovalRatio: number;
  minItems: number;
  /** The marking of its claims (extensions §19), which a record's own marking may raise. */
  tlp: Tlp;
  /** The Admiralty code of its claims (extensions §18), as given; their values are columns too (the score reads them). */
  reliability: Reliability;
  credibility: Credibility;
  /** `csv` (a column) or `ndjson` (a member): where each record gives its own credibility, in `credibilityScale`. */
  credibilityField?: string;
  credibilityScale?: CredibilityScale;
  valueColumn?: string;
  typeColumn?: string;
  contextColumns?: string[];
  delimiter?: string;
  skipLines?: number;
  valueField?: string;
  contextFields?: string[];
  collectionID?: string;
  /** `taxii21`: the `limit` asked of each page; absent, the server's own page size. */
  pageSize?: number;
  toIdsOnly?: boolean;
}

/** Write-only: header values by name, and the basic-auth password. */
export interface SourceSecrets {
  headers: Record<string, string>;
  password?: string;
}

export interface SourceForm {
  name: string;
  collection: string;
  kind: SourceKind;
  enabled: boolean;
  intervalSeconds: number;
  settings: SourceSettings;
  secrets: SourceSecrets;
}

const invalid = (field: string, rule: string) => CommonErrors.invalidData(`${field} ${rule}`, { field });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function text(body: Record<string, unknown>, field: string, rule = 'must be a non-empty string'): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 4096) throw invalid(field, rule);
  return value;
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw invalid(field, 'is required');
  return value;
}

function integer(body: Record<string, unknown>, field: string, min: number, max: number): number | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw invalid(field, `must be a whole number from ${min} to ${max}`);
  return value;
}

function names(body: Record<string, unknown>, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item === '')) throw invalid(field, 'must be an array of non-empty strings');
  return value as string[];
}

/** A header name as RFC 9110 allows it (a token), and one the client may set. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'if-none-match', 'if-modified-since', 'accept-encoding']);

/**
 * `http` or `https`, no credentials (they go in `basicAuth`), and not a literal address the policy denies.
 * A name is checked when it is resolved, at each connection.
 */
export function checkUrl(raw: string, field: string, denied: (address: string) => boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(field, 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(field, 'must be an http or https URL');
  if (url.username !== '' || url.password !== '') throw invalid(field, 'must not carry credentials (use basicAuth)');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0 && denied(host)) throw invalid(field, `names ${host}, an address SOURCE_DENY_NETWORKS refuses`);
  return url.href;
}

/**
 * A source's form (extensions §13) checked whole, member by member: the first wrong member → 400
 * InvalidData naming it (`details.field`). `current` is the stored form a PATCH starts from: members left
 * out keep their values; a secret left out is kept, `null` clears it.
 */
export function parseSourceForm(body: unknown, denied: (address: string) => boolean, current?: SourceForm): SourceForm {
  if (!isObject(body)) throw CommonErrors.invalidData('the body must be a JSON object');
  const kind = (body.kind ?? current?.kind) as SourceKind;
  if (!SOURCE_KINDS.includes(kind)) throw invalid('kind', `must be one of ${SOURCE_KINDS.join(', ')}`);
  const allowed = new Set([...COMMON, ...PER_KIND[kind]]);
  const unknown = Object.keys(body).find((member) => !allowed.has(member));
  if (unknown !== undefined && RECORD_CREDIBILITY.includes(unknown))
    throw invalid(unknown, `is only taken by csv and ndjson sources (a ${kind} source's records give none, or their own: a taxii21 confidence, a misp tag)`);
  if (unknown !== undefined) throw invalid(unknown, `is not a member of a ${kind} source`);
  const before = current?.settings;

  const name = text(body, 'name') ?? current?.name;
  if (current !== undefined && name !== current.name) throw invalid('name', 'cannot be changed');
  if (name === undefined || !SOURCE_NAME_PATTERN.test(name)) throw invalid('name', 'must be 1-128 of a-z 0-9 . _ -');
  const collection = required(text(body, 'collection') ?? current?.collection, 'collection');
  // Its claims are objects of that collection: a source follows one collection for its whole life.
  if (current !== undefined && collection !== current.collection) throw invalid('collection', 'cannot be changed');
  const url = checkUrl(required(text(body, 'url') ?? before?.url, 'url'), 'url', denied);
  if (body.enabled !== undefined && typeof body.enabled !== 'boolean') throw invalid('enabled', 'must be true or false');
  const enabled = (body.enabled as boolean | undefined) ?? current?.enabled ?? true;
  const intervalSeconds = integer(body, 'intervalSeconds', MIN_INTERVAL, MAX_INTERVAL) ?? current?.intervalSeconds ?? 3600;

  const delta = kind === 'taxii21' || kind === 'misp';
  const mode = (body.mode ?? before?.mode ?? (delta ? 'delta' : 'snapshot')) as SourceMode;
  if (!SOURCE_MODES.includes(mode)) throw invalid('mode', 'must be snapshot or delta');
  if (delta && mode !== 'delta') throw invalid('mode', `must be delta for a ${kind} source`);

  let removal = before?.removal ?? { policy: 'remove' as RemovalPolicy };
  if (body.removal !== undefined) {
    const raw = body.removal;
    if (!isObject(raw) || !REMOVAL_POLICIES.includes(raw.policy as RemovalPolicy))
      throw invalid('removal.policy', `must be one of ${REMOVAL_POLICIES.join(', ')}`);
    const extra = Object.keys(raw).find((member) => member !== 'policy' && member !== 'runs');
    if (extra !== undefined) throw invalid(`removal.${extra}`, 'is not a member of removal');
    if (raw.policy === 'afterMissedRuns') {
      const runs = integer(raw, 'runs', 1, 1000);
      removal = { policy: 'afterMissedRuns', runs: required(runs === undefined ? undefined : runs, 'removal.runs') };
    } else {
      if (raw.runs !== undefined) throw invalid('removal.runs', 'is only taken with the policy afterMissedRuns');
      removal = { policy: raw.policy as RemovalPolicy };
    }
  }

  if (body.context !== undefined && !isObject(body.context)) throw invalid('context', 'must be a JSON object');
  const context = (body.context as Record<string, unknown> | undefined) ?? before?.context ?? {};

  let headers: Record<string, string> = current?.secrets.headers ?? {};
  if (body.headers === null) headers = {};
  else if (body.headers !== undefined) {
    if (!isObject(body.headers)) throw invalid('headers', 'must be an object of header names to string values');
    headers = {};
    for (const [header, value] of Object.entries(body.headers)) {
      if (!HEADER_NAME.test(header) || RESERVED_HEADERS.has(header.toLowerCase())) throw invalid(`headers.${header}`, 'is not a header name a source may set');
      if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw invalid(`headers.${header}`, 'must be a string without line breaks');
      headers[header] = value;
    }
  }

  let username = before?.username;
  let password = current?.secrets.password;
  if (body.basicAuth === null) {
    username = undefined;
    password = undefined;
  } else if (body.basicAuth !== undefined) {
    const raw = body.basicAuth;
    if (!isObject(raw)) throw invalid('basicAuth', 'must be {username, password}');
    const extra = Object.keys(raw).find((member) => member !== 'username' && member !== 'password');
    if (extra !== undefined) throw invalid(`basicAuth.${extra}`, 'is not a member of basicAuth');
    if (typeof raw.username !== 'string' || raw.username === '' || raw.username.includes(':'))
      throw invalid('basicAuth.username', 'must be a non-empty string without ":"');
    username = raw.username;
    // A username alone keeps the stored password (it is write-only); `null` clears it.
    if (raw.password === null) password = undefined;
    else if (raw.password !== undefined) {
      if (typeof raw.password !== 'string') throw invalid('basicAuth.password', 'must be a string');
      password = raw.password;
    }
    if (password === undefined) throw invalid('basicAuth.password', 'is required');
  }

  const rank = rankOf(body.tlp);
  if (body.tlp !== undefined && rank === undefined) throw invalid('tlp', `must be ${TLP_INPUT_HINT}`);
  // Stored as its output spelling (`TLP:WHITE` as `TLP:CLEAR`), which the view shows.
  const tlp = rank === undefined ? (before?.tlp ?? 'TLP:CLEAR') : tlpOf(rank);
  const ratio = body.maxRemovalRatio;
  if (ratio !== undefined && (typeof ratio !== 'number' || !(ratio >= 0 && ratio <= 1))) throw invalid('maxRemovalRatio', 'must be a number from 0 to 1');
  const settings: SourceSettings = {
    url,
    mode,
    removal,
    context,
    headerNames: Object.keys(headers),
    ...(username !== undefined && { username }),
    maxRemovalRatio: (ratio as number | undefined) ?? before?.maxRemovalRatio ?? 0.5,
    minItems: integer(body, 'minItems', 0, 100_000_000) ?? before?.minItems ?? 1,
    tlp,
    ...admiraltyOf(body, before),
  };
  if (kind === 'csv') {
    settings.valueColumn = required(text(body, 'valueColumn') ?? before?.valueColumn, 'valueColumn');
    const typeColumn = text(body, 'typeColumn') ?? before?.typeColumn;
    if (typeColumn !== undefined) settings.typeColumn = typeColumn;
    settings.contextColumns = names(body, 'contextColumns') ?? before?.contextColumns ?? [];
    const delimiter = body.delimiter ?? before?.delimiter ?? ',';
    if (typeof delimiter !== 'string' || delimiter.length !== 1 || /["\r\n]/.test(delimiter))
      throw invalid('delimiter', 'must be one character, not a quote or a line break');
    settings.delimiter = delimiter;
    settings.skipLines = integer(body, 'skipLines', 0, 1000) ?? before?.skipLines ?? 0;
    Object.assign(settings, recordCredibilityOf(body, before));
  } else if (kind === 'ndjson') {
    settings.valueField = required(text(body, 'valueField') ?? before?.valueField, 'valueField');
    settings.contextFields = names(body, 'contextFields') ?? before?.contextFields ?? [];
    Object.assign(settings, recordCredibilityOf(body, before));
  } else if (kind === 'taxii21') {
    settings.collectionID = required(text(body, 'collectionID') ?? before?.collectionID, 'collectionID');
    const pageSize = integer(body, 'pageSize', 1, 10_000) ?? before?.pageSize;
    if (pageSize !== undefined) settings.pageSize = pageSize;
  } else if (kind === 'misp') {
    if (body.toIdsOnly !== undefined && typeof body.toIdsOnly !== 'boolean') throw invalid('toIdsOnly', 'must be true or false');
    settings.toIdsOnly = (body.toIdsOnly as boolean | undefined) ?? before?.toIdsOnly ?? true;
  }
  return { name, collection, kind, enabled, intervalSeconds, settings, secrets: { headers, ...(password !== undefined && { password }) } };
}

/** The source's Admiralty code: `reliability` A…F and `credibility` 1…6, each kept when left out (extensions §18). */
function admiraltyOf(body: Record<string, unknown>, before: SourceSettings | undefined): Pick<SourceSettings, 'reliability' | 'credibility'> {
  if (body.reliability !== undefined && !RELIABILITIES.includes(body.reliability as Reliability))
    throw invalid('reliability', `must be one of ${RELIABILITIES.join(', ')}`);
  if (body.credibility !== undefined && !CREDIBILITIES.includes(body.credibility as Credibility))
    throw invalid('credibility', `must be a whole number from 1 to 6`);
  return {
    reliability: (body.reliability as Reliability | undefined) ?? before?.reliability ?? DEFAULT_RELIABILITY,
    credibility: (body.credibility as Credibility | undefined) ?? before?.credibility ?? DEFAULT_CREDIBILITY,
  };
}

/**
 * Where a `csv` or `ndjson` record gives its own credibility (`credibilityField`, `null` clears it) and in
 * which scale (`credibilityScale`, only with a field: `admiralty` unless said).
 */
function recordCredibilityOf(body: Record<string, unknown>, before: SourceSettings | undefined): Pick<SourceSettings, 'credibilityField' | 'credibilityScale'> {
  const field = body.credibilityField === null ? undefined : (text(body, 'credibilityField') ?? before?.credibilityField);
  if (body.credibilityScale !== undefined && !CREDIBILITY_SCALES.includes(body.credibilityScale as CredibilityScale))
    throw invalid('credibilityScale', `must be one of ${CREDIBILITY_SCALES.join(', ')}`);
  if (field === undefined) {
    if (body.credibilityScale !== undefined) throw invalid('credibilityScale', 'is only taken with a credibilityField');
    return {};
  }
  return { credibilityField: field, credibilityScale: (body.credibilityScale as CredibilityScale | undefined) ?? before?.credibilityScale ?? 'admiralty' };
}
