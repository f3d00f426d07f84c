import { TLP_LEVELS, type Tlp } from '../../src/common/markings/tlp.js';
import { createKey, type KeySpec } from './factories.js';
import type { TestApp } from './test-app.js';

/**
 * Markings set in the database, for the readers' tests, until native writes carry a `tlp` and key creation a
 * `maxTLP` (extensions §19). Set them before anything reads what they mark: a marking set here records no
 * change, so an export's tag (its feed position) does not move with it.
 */

const rank = (tlp: Tlp) => TLP_LEVELS.indexOf(tlp);

const OF_COLLECTION = `collection_id = (SELECT id FROM intel_collection WHERE name = $1)`;
const KEYED = `jsonb_build_array(jsonb_build_object('value', $2::text))`;

/** Marks the object of `collection` holding a key of value `value` with `tlp`, as an api claim would: the object and each of its change records. */
export async function markObject(t: TestApp, collection: string, value: string, tlp: Tlp): Promise<void> {
  const marked = await t.db.query(`UPDATE intel_object SET api_tlp = $3, was_tlp = tlp WHERE ${OF_COLLECTION} AND keys @> ${KEYED}`, [
    collection,
    value,
    rank(tlp),
  ]);
  if (marked.rowCount !== 1) throw new Error(`no one object of ${collection} holds ${value}`);
  await markRecords(t, collection, value, tlp);
}

/** Marks the change records of the object holding `value` (what TAXII serves as its versions) whose object view contains `view`. */
export async function markRecords(t: TestApp, collection: string, value: string, tlp: Tlp, view: Record<string, unknown> = {}): Promise<void> {
  await t.db.query(`UPDATE intel_change SET tlp = $3 WHERE ${OF_COLLECTION} AND object @> jsonb_build_object('keys', ${KEYED}) AND object @> $4::jsonb`, [
    collection,
    value,
    rank(tlp),
    JSON.stringify(view),
  ]);
}

/** A new key with `permissions` that may read up to `maxTlp`. */
export async function keyUpTo(t: TestApp, maxTlp: Tlp, permissions: KeySpec['permissions']): Promise<string> {
  const { id, key } = await createKey(t, { permissions });
  // Before its first use: the key's record is not cached yet.
  await t.db.query(`UPDATE auth_api_key SET max_tlp = $2 WHERE id = $1`, [id, rank(maxTlp)]);
  return key;
}

/** A new key that may Read the intel collection `collection`, up to `maxTlp`. */
export async function readerUpTo(t: TestApp, maxTlp: Tlp, collection: string): Promise<string> {
  const resources = await t.http().get('/auth/resources?parentID=2&limit=1000').set('X-Api-Key', t.adminKey);
  const resource = (resources.body as { id: number; name: string }[]).find((found) => found.name === collection)!.id;
  return keyUpTo(t, maxTlp, [{ resource, actions: ['Read'] }]);
}
