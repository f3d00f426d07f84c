import type { Tlp } from '../../src/common/markings/tlp.js';
import { createKey } from './factories.js';
import type { TestApp } from './test-app.js';

/** A new key that may Read the intel collection `collection`, up to `maxTLP` (extensions §19). */
export async function readerUpTo(t: TestApp, maxTLP: Tlp, collection: string): Promise<string> {
  const resources = await t.http().get('/auth/resources?parentID=2&limit=1000').set('X-Api-Key', t.adminKey);
  const resource = (resources.body as { id: number; name: string }[]).find((found) => found.name === collection)!.id;
  return (await createKey(t, { permissions: [{ resource, actions: ['Read'] }], maxTLP })).key;
}
