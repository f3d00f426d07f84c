import { KEY_TYPES, normalizeKeySet, type ObjectKey, type ObjectType } from '../common/indicators/indicators.js';
import type { ObjectFormDto } from '../common/indicators/object-form.dto.js';
import type { KeyHit, ObjectWrite } from './objects.repository.js';
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
}

/** Normalises the keys (InvalidKeyFormat, InvalidKeySet) and refuses contexts jsonb cannot hold (InvalidData). */
export function prepareObject(form: ObjectFormDto): PreparedObject {
  const keys = sortKeys(normalizeKeySet(form.type, form.keys));
  const contextJson = JSON.stringify(form.context);
  if (UNSTORABLE_ESCAPE.test(contextJson)) throw ObjectErrors.unstorableContext();
  return { type: form.type, keys, context: form.context, contextJson };
}

/** The instance a collection's schema validates: the whole object as it will be stored (decisions §6). */
export function schemaInstance(object: PreparedObject): Record<string, unknown> {
  return { type: object.type, keys: object.keys, context: object.context };
}

/**
 * The decisions §7 add rules for a prepared object, given the objects its keys already belong to: the
 * write to make, or null when the add changes nothing. KeySetConflict when the keys name two objects or
 * clash with one.
 */
export function planAdd(object: PreparedObject, hits: KeyHit[]): ObjectWrite | null {
  const { keys, contextJson: context } = object;
  if (hits.length === 0) return { kind: 'insert', type: object.type, keys, context };
  if (hits.length > 1) throw ObjectErrors.keySetConflict('the keys belong to two or more different objects');
  const [hit] = hits;
  const clash = keys.find((key) => hit.keys.some((own) => own.type === key.type && own.value !== key.value));
  if (clash) {
    throw ObjectErrors.keySetConflict(`the object already has a different ${clash.type} key than "${clash.value}"`);
  }
  const newKeys = keys.filter((key) => !hit.keys.some((own) => own.type === key.type));
  if (newKeys.length === 0 && hit.sameContext) return null;
  return { kind: 'update', objectId: hit.id, keys: sortKeys([...hit.keys, ...newKeys]), newKeys, context };
}
