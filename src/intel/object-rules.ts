import { KEY_TYPES, normalizeKeySet, type ObjectKey, type ObjectType } from '../common/indicators/indicators.js';
import type { ObjectFormDto } from '../common/indicators/object-form.dto.js';
import { mostRestrictive, rankOf, type TlpRank } from '../common/markings/tlp.js';
import { parseDateTime } from '../common/validation/date-time.js';
import type { AddWrite, ApiClaimFreshness, Expiry, KeyHit } from './object-rows.js';
import { ObjectErrors } from './objects.errors.js';

/**
 * The add rules of decisions §7 as pure functions, shared by the single-object endpoint and batches:
 * both prepare a submitted object with `prepareObject` and decide with `planAdd`.
 */

/** Keys in one stable order (a File has at most one key per hash type, so the type alone orders them). */
export function sortKeys(keys: ObjectKey[]): ObjectKey[] {
  return [...keys].sort((a, b) => KEY_TYPES.indexOf(a.type) - KEY_TYPES.indexOf(b.type));
}

/**
 * PostgreSQL's jsonb refuses `\u0000` and unpaired surrogates, which JSON (and JSON.stringify) allow.
 * Matches such an escape in JSON.stringify output, i.e. one not itself escaped by a backslash.
 */
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/** A submitted object with normalised keys and its context as JSON text, ready for the schema check. */
export interface PreparedObject {
  type: ObjectType;
  keys: ObjectKey[];
  /** The context as submitted (for the schema check and for comparisons). */
  context: Record<string, unknown>;
  /** The same context as JSON text, as it is written. */
  contextJson: string;
  /** When the written object expires. */
  expiry: Expiry;
  /**
   * The marking of the api claim the write makes (extensions §19): the request's `tlp`, a TAXII object's own,
   * else the collection's `defaultTLP`; null for a source's write, which makes none (api-claim.ts).
   */
  tlp: TlpRank | null;
}

/**
 * The expiry of an add: its own `expiresAt` (already of the RFC 3339 form; here a real, future moment,
 * kept to milliseconds), else the collection's time to live from this write, else none.
 */
export function expiryOf(expiresAt: string | null | undefined, ttlSeconds: number | null): Expiry {
  if (expiresAt == null) return { at: null, ttlSeconds };
  const at = parseDateTime(expiresAt);
  if (!at) throw ObjectErrors.invalidExpiresAt('expiresAt is not a valid date-time');
  if (at.getTime() <= Date.now()) throw ObjectErrors.invalidExpiresAt('expiresAt must be in the future');
  return { at: at.toISOString(), ttlSeconds: null };
}

/**
 * Normalises the keys (InvalidKeyFormat, InvalidKeySet), refuses contexts jsonb cannot hold and expiries
 * that are not future moments (InvalidData); `ttlSeconds` is the collection's time to live, `tlp` the
 * write's marking (PreparedObject.tlp).
 */
export function prepareObject(form: ObjectFormDto & { expiresAt?: string | null }, ttlSeconds: number | null, tlp: TlpRank | null): PreparedObject {
  const expiry = expiryOf(form.expiresAt, ttlSeconds);
  const keys = sortKeys(normalizeKeySet(form.type, form.keys));
  const contextJson = JSON.stringify(form.context);
  if (UNSTORABLE_ESCAPE.test(contextJson)) throw ObjectErrors.unstorableContext();
  return { type: form.type, keys, context: form.context, contextJson, expiry, tlp };
}

/**
 * The `tlp` query parameter of a native write (single add, batch, import): its rank, or undefined when it is
 * absent (the collection's `defaultTLP` applies). Anything but a TLP level (a repeated parameter included) is
 * 400 InvalidData naming it (extensions §19), before anything is written.
 */
export function tlpParameter(tlp: unknown): TlpRank | undefined {
  if (tlp === undefined) return undefined;
  const rank = rankOf(tlp);
  if (rank === undefined) throw ObjectErrors.invalidTlp();
  return rank;
}

/**
 * An object's marking from its claims' (null: no such claim): the most restrictive, CLEAR without any. The
 * rule of the generated column `intel_object.tlp` (migration Markings), for the batch plan, which replays the
 * markings of several changes of one object before the row is written.
 */
export const objectMarking = (apiTlp: TlpRank | null, claimedTlp: TlpRank | null): TlpRank => mostRestrictive([apiTlp ?? undefined, claimedTlp ?? undefined]);

/** The instance a collection's schema validates: the whole object as it will be stored (decisions §6). */
export function schemaInstance(object: PreparedObject): Record<string, unknown> {
  return { type: object.type, keys: object.keys, context: object.context };
}

/**
 * Whether an identical native re-send by a key of `reliability` (a value) must still refresh the object's api
 * claim (extensions §18, the anchor "kept to the hour"): the rule of apiClaimBehind (api-claim.ts), which the
 * refreshing statement checks again on the locked row, applied to what the decision read, so that a re-send
 * within the hour by a key no more reliable sends nothing more.
 */
export const claimBehind = (claim: ApiClaimFreshness, reliability: number): boolean =>
  claim.apiSeenLately !== true || claim.apiReliability === null || claim.apiReliability < reliability;

/** What an add did: stored a new object, changed one, or found it already as submitted (an identical re-send). */
export type AddOutcome = 'Added' | 'Updated' | 'Unchanged';

/** The outcome of an add that made `write` (planAdd's answer) and recorded it. */
export function addOutcome(write: AddWrite | null): AddOutcome {
  return write === null ? 'Unchanged' : write.kind === 'insert' ? 'Added' : 'Updated';
}

/**
 * The decisions §7 add rules for a prepared object, given the objects its keys already belong to: the
 * write to make, or null when the add changes nothing. KeySetConflict when the keys name two objects or
 * clash with one.
 */
export function planAdd(object: PreparedObject, hits: KeyHit[]): AddWrite | null {
  const { keys, contextJson: context, expiry } = object;
  const { tlp } = object;
  if (hits.length === 0) return { kind: 'insert', type: object.type, keys, context, expiry, tlp };
  if (hits.length > 1) throw ObjectErrors.keySetConflict('the keys belong to two or more different objects');
  const [hit] = hits;
  const clash = keys.find((key) => hit.keys.some((own) => own.type === key.type && own.value !== key.value));
  if (clash) {
    throw ObjectErrors.keySetConflict(`the object already has a different ${clash.type} key than "${clash.value}"`);
  }
  const newKeys = keys.filter((key) => !hit.keys.some((own) => own.type === key.type));
  // A time to live always moves the expiry (sameExpiry is null then): such an add is an Update. So is a
  // native write whose marking differs from the api claim's, or that makes the object's first api claim.
  if (newKeys.length === 0 && hit.sameContext && hit.sameExpiry && (tlp === null || hit.apiTlp === tlp)) return null;
  return { kind: 'update', objectId: hit.id, keys: sortKeys([...hit.keys, ...newKeys]), newKeys, context, expiry, tlp, decidedOnKeys: hit.keys };
}
