import type { KeyType, ObjectKey } from '../common/indicators/indicators.js';
import { mostRestrictive, rankOfTags, type TlpRank } from '../common/markings/tlp.js';
import { credibilityOfTags } from '../scoring/admiralty.js';
import { failure, formOf, isPlainObject, normalized, type FormatFailure, type ObjectForm, type Rejection } from './forms.js';

/**
 * MISP feeds (a source of kind `misp`): the feed's `manifest.json` (`parseMispManifest`) and one event file
 * `<uuid>.json` (`parseMispEvent`), the attributes of the event and of its objects as object forms. Pure:
 * the caller fetches the files and decides which events to read again (by `timestamp`).
 */

/** One event of a manifest: its uuid and the timestamp that changes whenever the event does. */
export interface MispManifestEntry {
  uuid: string;
  timestamp: string;
  info?: string;
}

/** `manifest.json`: `{"<uuid>": {"timestamp": "…", "info": "…", …}, …}`; entries without a timestamp are rejected. */
export function parseMispManifest(text: string): { ok: true; events: MispManifestEntry[]; rejected: Rejection[] } | { ok: false; failure: FormatFailure } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, failure: failure('NotJson', 'the manifest is not valid JSON') };
  }
  if (!isPlainObject(parsed)) return { ok: false, failure: failure('NotJson', 'the manifest is not a JSON object of events') };
  const events: MispManifestEntry[] = [];
  const rejected: Rejection[] = [];
  for (const [index, [uuid, entry]] of Object.entries(parsed).entries()) {
    const timestamp = isPlainObject(entry) ? timestampOf(entry.timestamp) : undefined;
    if (timestamp === undefined) rejected.push({ index, value: uuid, reason: 'the manifest entry has no timestamp' });
    else events.push({ uuid, timestamp, ...(typeof (entry as Record<string, unknown>).info === 'string' && { info: (entry as Record<string, string>).info }) });
  }
  return { ok: true, events, rejected };
}

/** MISP writes timestamps as strings of seconds, sometimes as numbers: kept as the string of digits. */
function timestampOf(value: unknown): string | undefined {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  return typeof text === 'string' && /^\d+$/.test(text) ? text : undefined;
}

/** The key types each attribute type gives, one per part of a composite value (`filename|sha256`, `domain|ip`). */
const HASHES: Record<string, KeyType> = { md5: 'MD5Hash', sha1: 'SHA1Hash', sha256: 'SHA256Hash', sha512: 'SHA512Hash' };
const ATTRIBUTE_KEYS: Record<string, (KeyType | null)[]> = {
  ...Object.fromEntries(Object.entries(HASHES).map(([name, type]) => [name, [type]])),
  ...Object.fromEntries(Object.entries(HASHES).map(([name, type]) => [`filename|${name}`, [null, type]])),
  domain: ['DomainName'],
  hostname: ['DomainName'],
  url: ['URL'],
  uri: ['URL'],
  'ip-src': ['IPAddress'],
  'ip-dst': ['IPAddress'],
  'domain|ip': ['DomainName', 'IPAddress'],
  'ip-src|port': ['IPAddress', null],
  'ip-dst|port': ['IPAddress', null],
};

export interface MispOptions {
  /** Only attributes flagged for detection (`to_ids`); default true. */
  toIdsOnly?: boolean;
  /** The context every object gets (a MISP attribute's own fields are given beside the form, not in it). */
  context?: Record<string, unknown>;
}

/**
 * A form with the MISP attribute it comes from, and the marking its event's and attribute's `tlp:` tags
 * carry (the most restrictive of the two; absent when neither has one).
 */
export interface MispForm {
  form: ObjectForm;
  attribute: { uuid?: string; type: string; category?: string; comment?: string };
  tlp?: TlpRank;
  /** The value of the attribute's `admiralty-scale:information-credibility` tag, else its event's (extensions §18); absent without one. */
  credibility?: number;
}

export interface MispEvent {
  uuid?: string;
  timestamp?: string;
  forms: MispForm[];
  /** Keys of attributes (or a whole event or object) marked `deleted`: whoever claimed them from this event stops. */
  withdrawn: ObjectKey[];
  /** Supported attributes whose value the intel rules refuse. */
  rejected: Rejection[];
  /** Attributes of other types (`email-src`, `mutex`, …) and, with `toIdsOnly`, those not flagged `to_ids`. */
  ignored: number;
}

const flag = (value: unknown) => value === true || value === 1 || value === '1' || value === 'true';
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The names of an event's or attribute's `Tag` list (`[{"name": "tlp:amber"}, …]`). */
const tagsOf = (holder: Record<string, unknown>): string[] => listed(holder.Tag).flatMap((tag) => (typeof tag.name === 'string' ? [tag.name] : []));

/** The marking of an event's or attribute's tags; undefined without a `tlp:` tag. */
const markingOf = (holder: Record<string, unknown>): TlpRank | undefined => rankOfTags(tagsOf(holder));

/**
 * One event file (`{"Event": {…}}`): the attributes of the event and of its `Object`s. An attribute with
 * `to_ids` false is ignored while `toIdsOnly` holds (the default): MISP marks with it what is context, not
 * for detection (a victim's address, a legitimate domain a sample contacts), and a firewall must not block
 * it; with `toIdsOnly: false` it is a form like any other. A deleted attribute, object or event gives its
 * keys as `withdrawn` (whatever its `to_ids`), never a form. A composite value gives a key per part with a
 * key type (`domain|ip` two, `filename|sha256` one, `ip-dst|port` the address); an address with a prefix is
 * a network.
 */
export function parseMispEvent(source: string, options: MispOptions = {}): { ok: true; event: MispEvent } | { ok: false; failure: FormatFailure } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch {
    return { ok: false, failure: failure('NotJson', 'the event file is not valid JSON') };
  }
  const event = isPlainObject(parsed) ? parsed.Event : undefined;
  if (!isPlainObject(event)) return { ok: false, failure: failure('NotAnEvent', 'the event file has no "Event" object') };
  const toIdsOnly = options.toIdsOnly ?? true;
  const eventTlp = markingOf(event);
  const eventCredibility = credibilityOfTags(tagsOf(event));
  const result: MispEvent = {
    ...(text(event.uuid) !== undefined && { uuid: text(event.uuid) }),
    ...(timestampOf(event.timestamp) !== undefined && { timestamp: timestampOf(event.timestamp) }),
    forms: [],
    withdrawn: [],
    rejected: [],
    ignored: 0,
  };
  const attributes = [...listed(event.Attribute).map((attribute) => ({ attribute, deleted: flag(event.deleted) }))];
  for (const object of listed(event.Object)) {
    const deleted = flag(event.deleted) || flag(object.deleted);
    attributes.push(...listed(object.Attribute).map((attribute) => ({ attribute, deleted })));
  }
  for (const [index, { attribute, deleted }] of attributes.entries()) {
    const type = text(attribute.type);
    const value = text(attribute.value);
    const parts = type !== undefined && Object.hasOwn(ATTRIBUTE_KEYS, type) ? ATTRIBUTE_KEYS[type] : undefined;
    if (parts === undefined || value === undefined || (!deleted && !flag(attribute.deleted) && toIdsOnly && !flag(attribute.to_ids))) {
      result.ignored++;
      continue;
    }
    const values = parts.length === 1 ? [value] : value.split('|');
    if (values.length !== parts.length) {
      result.rejected.push({ index, value, reason: `a ${type} value has ${parts.length} parts separated by "|"` });
      continue;
    }
    const origin = {
      type: type!,
      ...(text(attribute.uuid) !== undefined && { uuid: text(attribute.uuid) }),
      ...(text(attribute.category) !== undefined && { category: text(attribute.category) }),
      ...(text(attribute.comment) !== undefined && text(attribute.comment) !== '' && { comment: text(attribute.comment) }),
    };
    const ranks = [eventTlp, markingOf(attribute)];
    const credibility = credibilityOfTags(tagsOf(attribute)) ?? eventCredibility;
    const carried = { ...(ranks.some((rank) => rank !== undefined) && { tlp: mostRestrictive(ranks) }), ...(credibility !== undefined && { credibility }) };
    parts.forEach((keyType, part) => {
      if (keyType === null) return;
      const keyValue = values[part].trim();
      const checked = normalized({ type: keyType === 'IPAddress' && keyValue.includes('/') ? 'IPNetwork' : keyType, value: keyValue });
      if ('reason' in checked) result.rejected.push({ index, value: keyValue, reason: checked.reason });
      else if (deleted || flag(attribute.deleted)) result.withdrawn.push(checked.key);
      else result.forms.push({ form: formOf(checked.key, { ...options.context }), attribute: origin, ...carried });
    });
  }
  return { ok: true, event: result };
}

/** The plain objects of a MISP list member (`Attribute`, `Object`); anything else in it is skipped. */
function listed(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isPlainObject) : [];
}
