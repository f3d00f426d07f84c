import { normalizeKey, type ObjectKey } from '../common/indicators/indicators.js';
import { rankOfMarkingRefs, type TlpRank } from '../common/markings/tlp.js';
import { recordCredibility } from '../scoring/admiralty.js';
import { CONTEXT_EXTENSION_ID, SERVICE_IDENTITY_ID } from '../stix/stix-ids.js';
import { parsePattern, PatternRefused } from '../stix/stix-pattern.js';
import { fromStix } from '../stix/stix-projection.js';
import { failure, isPlainObject, normalized, type FormatFailure, type ObjectForm } from './forms.js';

/**
 * STIX 2.1 documents in: a TAXII envelope or a STIX bundle file (`parseStixDocument`), and its objects as
 * object forms (`stixItems`), mapped by the one STIX projection (`src/stix/`). Pure: whether a lone
 * observable's keys are stored already is for the caller to ask.
 */

/** The `objects` (or another member) of an envelope or bundle: `NotJson`, `NoItems` when missing or empty, `TooManyItems` above `maxObjects`. */
export function parseStixDocument(
  text: string,
  maxObjects: number,
  member = 'objects',
): { ok: true; objects: unknown[] } | { ok: false; failure: FormatFailure } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, failure: failure('NotJson', 'the body is not valid JSON') };
  }
  const objects = isPlainObject(parsed) ? parsed[member] : undefined;
  if (!Array.isArray(objects) || objects.length === 0) return { ok: false, failure: failure('NoItems', `the body has no "${member}"`, { member }) };
  if (objects.length > maxObjects) return { ok: false, failure: failure('TooManyItems', `the body holds more than ${maxObjects} objects`) };
  return { ok: true, objects };
}

/**
 * What one posted STIX object is: a form to store (`sco` when it is an observable; `tlp` the marking its
 * `object_marking_refs` carry, absent when none is a TLP), an object that needs nothing stored (`carried`:
 * the service's own identity and extension definition, a marking definition, or an observable whose keys an
 * indicator of the same document has), or refused with the reason.
 */
export type StixItem = { kind: 'form'; form: ObjectForm; sco: boolean; tlp?: TlpRank } | { kind: 'carried' } | { kind: 'refused'; reason: string };

/** The marking a STIX object carries itself, as a member to spread (none when its refs name no TLP). */
function markingOf(object: unknown): { tlp?: TlpRank } {
  const tlp = rankOfMarkingRefs(isPlainObject(object) ? object.object_marking_refs : undefined);
  return tlp === undefined ? {} : { tlp };
}

const SERVICE_OBJECT_IDS = new Set([SERVICE_IDENTITY_ID, CONTEXT_EXTENSION_ID]);

/** A key compared as stored (normalised) when it can be, else as written. */
function keyId(key: ObjectKey): string {
  try {
    const normal = normalizeKey(key);
    return `${normal.type}\n${normal.value}`;
  } catch {
    return `${key.type}\n${key.value}`;
  }
}

/** The objects of a document, each as a `StixItem`, in order. An observable travels with its indicator. */
export function stixItems(objects: unknown[]): StixItem[] {
  const mapped = objects.map(fromStix);
  const indicatorKeys = new Set(mapped.flatMap((item) => (item.kind === 'object' && !item.sco ? item.form.keys.map(keyId) : [])));
  return mapped.map((item, index): StixItem => {
    const object = objects[index] as { id?: unknown; type?: unknown } | null;
    // Marking definitions (TLP or any other) are what objects refer to, not indicators: nothing to store.
    if (SERVICE_OBJECT_IDS.has(object?.id as string) || object?.type === 'marking-definition') return { kind: 'carried' };
    if (item.kind === 'refused') return item;
    if (item.sco && item.form.keys.every((key) => indicatorKeys.has(keyId(key)))) return { kind: 'carried' };
    return { kind: 'form', form: item.form, sco: item.sco, ...markingOf(object) };
  });
}

/** A page of a TAXII 2.1 `GET …/objects/`: its objects, `more`, and `next` when the server gave one. */
export interface TaxiiEnvelope {
  objects: unknown[];
  more: boolean;
  next?: string;
}

const ENVELOPE_MEMBERS = new Set(['objects', 'more', 'next']);

/**
 * A TAXII 2.1 envelope (TAXII 2.1 §3.7): a JSON object of `objects` (an array of objects), `more` (a
 * boolean) and `next` (a string), all optional (an empty collection answers `{}`), custom members `x_…`
 * allowed. JSON of another shape (a TAXII error message, another API's answer) is `NotTaxii`: a source run
 * must not take it for an empty page and move on.
 */
export function parseTaxiiEnvelope(text: string): { ok: true; envelope: TaxiiEnvelope } | { ok: false; failure: FormatFailure } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, failure: failure('NotJson', 'the TAXII page is not valid JSON') };
  }
  const notTaxii = (why: string) => ({ ok: false as const, failure: failure('NotTaxii', `the answer is JSON but not a TAXII 2.1 envelope: ${why}`) });
  if (!isPlainObject(parsed)) return notTaxii('not a JSON object');
  const stranger = Object.keys(parsed).find((member) => !ENVELOPE_MEMBERS.has(member) && !member.startsWith('x_'));
  if (stranger !== undefined) return notTaxii(`it has a member "${stranger}"`);
  const { objects = [], more = false, next } = parsed;
  if (!Array.isArray(objects) || !objects.every(isPlainObject)) return notTaxii('"objects" is not an array of objects');
  if (typeof more !== 'boolean') return notTaxii('"more" is not a boolean');
  if (next !== undefined && (typeof next !== 'string' || next === '')) return notTaxii('"next" is not a non-empty string');
  return { ok: true, envelope: { objects, more, ...(next !== undefined && { next }) } };
}

/**
 * What one object of a TAXII collection followed by a source is: an indicator to store (its keys
 * normalised, the source's context under its own), the keys whose claim it ends (a `revoked` indicator,
 * or one whose `valid_until` is past `now`), an indicator refused with the reason, or `skipped` (any other
 * object: observables travel with their indicators, relationships, reports and marking definitions are not
 * stored). An indicator's `tlp` is the marking its `object_marking_refs` carry (absent when none is a TLP), its
 * `credibility` its `confidence` (absent without one in 0..100).
 */
export type TaxiiItem =
  | { kind: 'form'; form: ObjectForm; tlp?: TlpRank; credibility?: number }
  | { kind: 'withdrawn'; keys: ObjectKey[] }
  | { kind: 'refused'; id: string; reason: string }
  | { kind: 'skipped' };

export function taxiiItem(object: unknown, context: Record<string, unknown>, now: Date): TaxiiItem {
  if (!isPlainObject(object) || object.type !== 'indicator') return { kind: 'skipped' };
  const id = typeof object.id === 'string' ? object.id : '';
  const validUntil = typeof object.valid_until === 'string' ? Date.parse(object.valid_until) : undefined;
  // An unreadable valid_until says nothing of when it ends: the item is refused (not written, and no claim
  // ends), where reading it as past would withdraw what the feed still means.
  if (object.revoked !== true && Number.isNaN(validUntil)) return { kind: 'refused', id, reason: 'valid_until is not a timestamp' };
  const ended = object.revoked === true || (validUntil !== undefined && !(validUntil > now.getTime()));
  if (ended) {
    // Keys it no longer stands for; a pattern never stored (unsupported) ends nothing.
    let keys: ObjectKey[] = [];
    try {
      keys = typeof object.pattern === 'string' ? parsePattern(object.pattern) : [];
    } catch (error) {
      if (!(error instanceof PatternRefused)) throw error;
    }
    return {
      kind: 'withdrawn',
      keys: keys.flatMap((key) => {
        const checked = normalized(key);
        return 'key' in checked ? [checked.key] : [];
      }),
    };
  }
  const mapped = fromStix(object);
  if (mapped.kind === 'refused') return { kind: 'refused', id, reason: mapped.reason };
  const keys: ObjectKey[] = [];
  for (const key of mapped.form.keys) {
    const checked = normalized(key);
    if ('reason' in checked) return { kind: 'refused', id, reason: checked.reason };
    keys.push(checked.key);
  }
  return { kind: 'form', form: { ...mapped.form, keys, context: { ...context, ...mapped.form.context } }, ...markingOf(object), ...confidenceOf(object) };
}

/** An indicator's STIX `confidence` (0..100), its credibility as a percentage (extensions §18); none outside that range. */
function confidenceOf(object: Record<string, unknown>): { credibility?: number } {
  const credibility = typeof object.confidence === 'number' ? recordCredibility(object.confidence, 'percent') : undefined;
  return credibility === undefined ? {} : { credibility };
}
