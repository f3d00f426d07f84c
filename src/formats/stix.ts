import { normalizeKey, type ObjectKey } from '../common/indicators/indicators.js';
import { CONTEXT_EXTENSION_ID, SERVICE_IDENTITY_ID } from '../stix/stix-ids.js';
import { fromStix } from '../stix/stix-projection.js';
import { failure, type FormatFailure, isPlainObject, type ObjectForm } from './forms.js';

/**
 * STIX 2.1 documents in: a TAXII envelope or a STIX bundle file (`parseStixDocument`), and its objects as
 * object forms (`stixItems`), mapped by the one STIX projection (`src/stix/`). Pure: whether a lone
 * observable's keys are stored already is for the caller to ask.
 */

/** The `objects` (or another member) of an envelope or bundle: `NotJson`, `NoItems` when missing or empty, `TooManyItems` above `maxObjects`. */
export function parseStixDocument(text: string, maxObjects: number, member = 'objects'): { ok: true; objects: unknown[] } | { ok: false; failure: FormatFailure } {
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
 * What one posted STIX object is: a form to store (`sco` when it is an observable), an object that needs
 * nothing stored (`carried`: the service's own identity and extension definition, or an observable whose
 * keys an indicator of the same document has), or refused with the reason.
 */
export type StixItem = { kind: 'form'; form: ObjectForm; sco: boolean } | { kind: 'carried' } | { kind: 'refused'; reason: string };

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
    if (SERVICE_OBJECT_IDS.has((objects[index] as { id?: unknown } | null)?.id as string)) return { kind: 'carried' };
    if (item.kind === 'refused') return item;
    if (item.sco && item.form.keys.every((key) => indicatorKeys.has(keyId(key)))) return { kind: 'carried' };
    return { kind: 'form', form: item.form, sco: item.sco };
  });
}
