import { ApiError } from '../common/errors/api-error.js';
import { inferObjectType, type KeyType, type ObjectKey, type ObjectType } from '../common/indicators/indicators.js';
import { TLP2_MARKING_IDS, type TlpRank } from '../common/markings/tlp.js';
import { CONTEXT_EXTENSION_ID, idContributingHash, scoId, SERVICE_IDENTITY_ID } from './stix-ids.js';
import { addressType, formatPattern, HASH_NAMES, hashKeyType, parsePattern, PatternRefused } from './stix-pattern.js';

/**
 * The STIX 2.1 projection of intel objects, both ways. Pure: an object version in, STIX objects out
 * (`toIndicator`, `toSco`), and a posted STIX object in, an object form or the reason it cannot be one
 * out (`fromStix`). Timestamps are STIX timestamps (UTC, `Z`) given by the caller.
 */

export type StixObject = Record<string, unknown> & { type: string; id: string };

/** An object as the intel area shows it. */
export interface ProjectedObject {
  type: ObjectType;
  keys: ObjectKey[];
  context: Record<string, unknown>;
  expiresAt?: string;
}

/** One version of an object's indicator: the object after a change (its last state for a removal). */
export interface ObjectVersion {
  /** The indicator's UUIDv4, kept for the object's life (a re-add after removal or expiry is a new one). */
  indicatorUuid: string;
  collection: string;
  object: ProjectedObject;
  /** The object's first add: `created` and `valid_from`. */
  firstAdded: string;
  /** This change's time: `modified`. */
  modified: string;
  /** Set on the last version: the object was deleted, removed at its expiry, withdrawn or decayed. */
  removal?: 'Deleted' | 'Expired' | 'Withdrawn' | 'Decayed';
  /** The object's marking at this version (extensions §19). */
  tlp: TlpRank;
  /** The object's score without decay, from its inputs now (extensions §18): 0..100. */
  confidence: number;
  /** When the indicator stops being valid before its expiry (a view's score bound, extensions §18), if ever. */
  validUntil?: string;
}

/**
 * `object_marking_refs` of a projected indicator or observable: the TLP 2.0 marking definition of its marking.
 * Only the id: the five definitions are predefined by OASIS (cti-stix-common-objects), consumers know them by
 * id, and serving them would mean serving OASIS's identity and TLP 2.0 extension definition with them.
 */
const markingRefs = (tlp: TlpRank) => ({ object_marking_refs: [TLP2_MARKING_IDS[tlp]] });

/** The creation time of the two constant objects below (fixed: they never change). */
const SERVICE_OBJECTS_CREATED = '2026-11-25T00:00:00.000Z';

/** The identity named as creator of the projected indicators and of the context extension. */
export const SERVICE_IDENTITY: StixObject = {
  type: 'identity',
  spec_version: '2.1',
  id: SERVICE_IDENTITY_ID,
  created: SERVICE_OBJECTS_CREATED,
  modified: SERVICE_OBJECTS_CREATED,
  name: 'Intelligence Data Service',
  description: 'The service that keeps these indicators in schema-validated collections and serves them over TAXII 2.1.',
  identity_class: 'system',
};

/** The property extension carrying an object's `context` on its indicator. */
export const CONTEXT_EXTENSION_DEFINITION: StixObject = {
  type: 'extension-definition',
  spec_version: '2.1',
  id: CONTEXT_EXTENSION_ID,
  created_by_ref: SERVICE_IDENTITY_ID,
  created: SERVICE_OBJECTS_CREATED,
  modified: SERVICE_OBJECTS_CREATED,
  name: 'Intelligence Data Service object context',
  description: "The context of the indicator's object as stored in its collection: a JSON object that satisfies the " + "collection's schema.",
  schema: 'The property "context" holds a JSON object; its shape is the JSON Schema of the collection the indicator comes from.',
  version: '1.0.0',
  extension_types: ['property-extension'],
};

/** indicator-type-ov (STIX 2.1 §10.11): `indicator_types` is copied from a context only when all are in it. */
const INDICATOR_TYPES = ['anomalous-activity', 'anonymization', 'benign', 'compromised', 'malicious-activity', 'attribution', 'unknown'];

const OBJECT_NAMES: Record<ObjectType, string> = {
  File: 'File',
  DomainName: 'Domain name',
  URL: 'URL',
  IPAddress: 'IP address',
  IPNetwork: 'IP network',
};

function indicatorTypes(context: Record<string, unknown>): string[] | undefined {
  const types = context.indicator_types;
  const valid = Array.isArray(types) && types.length > 0 && types.every((type) => INDICATOR_TYPES.includes(type as string));
  return valid ? (types as string[]) : undefined;
}

const earlier = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined ? a : Date.parse(a) <= Date.parse(b) ? a : b);

/** The indicator version of an object change. */
export function toIndicator(version: ObjectVersion): StixObject {
  const { object } = version;
  const types = indicatorTypes(object.context);
  // An expiry ends validity at the expiry time; a delete leaves the object's own expiry as it was. A view's
  // bound ends it earlier when the score falls below it first.
  const validUntil = earlier(object.expiresAt, version.validUntil);
  return {
    type: 'indicator',
    spec_version: '2.1',
    id: `indicator--${version.indicatorUuid}`,
    created_by_ref: SERVICE_IDENTITY_ID,
    created: version.firstAdded,
    modified: version.modified,
    name: `${OBJECT_NAMES[object.type]} ${object.keys[0].value}`,
    description: `${OBJECT_NAMES[object.type]} of the collection "${version.collection}": ${object.keys.map((key) => key.value).join(', ')}.`,
    ...(types && { indicator_types: types }),
    pattern: formatPattern(object.keys),
    pattern_type: 'stix',
    pattern_version: '2.1',
    valid_from: version.firstAdded,
    confidence: version.confidence,
    ...(validUntil !== undefined && { valid_until: validUntil }),
    ...(version.removal !== undefined && { revoked: true }),
    ...markingRefs(version.tlp),
    extensions: { [CONTEXT_EXTENSION_ID]: { extension_type: 'property-extension', context: object.context } },
  };
}

/** The SCO an object describes, with its deterministic id, marked `tlp` (the object's marking at the version served). */
export function toSco(object: Pick<ProjectedObject, 'type' | 'keys'>, tlp: TlpRank): StixObject {
  if (object.type === 'File') {
    const hashes: Record<string, string> = {};
    for (const key of object.keys) hashes[HASH_NAMES[key.type]!] = key.value;
    return { type: 'file', spec_version: '2.1', id: scoId('file', { hashes: idContributingHash(hashes) }), hashes, ...markingRefs(tlp) };
  }
  const value = object.keys[0].value;
  const type = object.type === 'DomainName' ? 'domain-name' : object.type === 'URL' ? 'url' : addressType(value);
  return { type, spec_version: '2.1', id: scoId(type, { value }), value, ...markingRefs(tlp) };
}

/** An object form ready for the intel batch path, or why a posted STIX object cannot become one. */
export type StixImport =
  | { kind: 'object'; form: { type: ObjectType; keys: ObjectKey[]; context: Record<string, unknown>; expiresAt?: string }; sco: boolean }
  | { kind: 'refused'; reason: string };

const refused = (reason: string): StixImport => ({ kind: 'refused', reason });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Properties of a foreign indicator kept as the context (one without the service's context extension). */
const MAPPED_PROPERTIES = ['name', 'description', 'indicator_types', 'labels', 'confidence'];

function formOf(keys: ObjectKey[], context: Record<string, unknown>, sco: boolean, expiresAt?: string): StixImport {
  let type: ObjectType;
  try {
    type = inferObjectType(keys);
  } catch (error) {
    if (error instanceof ApiError) return refused(error.message);
    throw error;
  }
  return { kind: 'object', form: { type, keys, context, ...(expiresAt !== undefined && { expiresAt }) }, sco };
}

function fromIndicator(indicator: Record<string, unknown>): StixImport {
  if (indicator.pattern_type !== 'stix') return refused(`pattern_type ${String(indicator.pattern_type)} is not supported (only stix)`);
  if (typeof indicator.pattern !== 'string') return refused('an indicator needs a pattern');
  if (indicator.revoked === true) return refused('a revoked indicator is not stored');
  let keys: ObjectKey[];
  try {
    keys = parsePattern(indicator.pattern);
  } catch (error) {
    if (error instanceof PatternRefused) return refused(`unsupported pattern: ${error.message}`);
    throw error;
  }
  const extensions = isPlainObject(indicator.extensions) ? indicator.extensions : {};
  const own = extensions[CONTEXT_EXTENSION_ID];
  let context: Record<string, unknown>;
  if (own !== undefined) {
    if (!isPlainObject(own) || !isPlainObject(own.context)) return refused('the context extension must hold a "context" object');
    context = own.context;
  } else {
    context = Object.fromEntries(MAPPED_PROPERTIES.filter((name) => indicator[name] !== undefined).map((name) => [name, indicator[name]]));
  }
  if (indicator.valid_until !== undefined && typeof indicator.valid_until !== 'string') return refused('valid_until must be a timestamp');
  return formOf(keys, context, false, indicator.valid_until as string | undefined);
}

function fromSco(sco: Record<string, unknown>): StixImport {
  if (sco.type === 'file') {
    if (!isPlainObject(sco.hashes)) return refused('a file is stored by its hashes, and it has none');
    const keys: ObjectKey[] = [];
    for (const [name, value] of Object.entries(sco.hashes)) {
      const type = hashKeyType(name);
      if (type !== undefined && typeof value === 'string') keys.push({ type, value });
    }
    if (keys.length === 0) return refused('a file needs an MD5, SHA-1, SHA-256 or SHA-512 hash');
    return formOf(keys, {}, true);
  }
  if (typeof sco.value !== 'string') return refused(`a ${String(sco.type)} needs a string value`);
  const type: KeyType = sco.type === 'domain-name' ? 'DomainName' : sco.type === 'url' ? 'URL' : sco.value.includes('/') ? 'IPNetwork' : 'IPAddress';
  return formOf([{ type, value: sco.value }], {}, true);
}

const SCO_TYPES = ['file', 'domain-name', 'url', 'ipv4-addr', 'ipv6-addr'];

/**
 * A posted STIX object as an object form (keys as written: the intel rules normalise and check them), or
 * the reason it is refused: objects of other types (relationships, reports, …), patterns outside what
 * `parsePattern` accepts.
 */
export function fromStix(object: unknown): StixImport {
  if (!isPlainObject(object) || typeof object.type !== 'string' || typeof object.id !== 'string') {
    return refused('a STIX object needs a type and an id');
  }
  if (!object.id.startsWith(`${object.type}--`)) return refused(`the id ${object.id} does not name a ${object.type}`);
  if (object.type === 'indicator') return fromIndicator(object);
  if (SCO_TYPES.includes(object.type)) return fromSco(object);
  return refused(`objects of type ${object.type} are not stored (only indicators and file, domain-name, url, ipv4-addr, ipv6-addr)`);
}
