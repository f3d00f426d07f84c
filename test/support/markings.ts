import type { Tlp } from '../../src/common/markings/tlp.js';
import { createKey } from './factories.js';
import type { TestApp } from './test-app.js';

/** A new key that may Read the intel collection `collection`, up to `maxTLP` (extensions §19). */
export async function readerUpTo(t: TestApp, maxTLP: Tlp, collection: string): Promise<string> {
  const resources = await t.http().get('/auth/resources?parentID=2&limit=1000').set('X-Api-Key', t.adminKey);
  const resource = (resources.body as { id: number; name: string }[]).find((found) => found.name === collection)!.id;
  return (await createKey(t, { permissions: [{ resource, actions: ['Read'] }], maxTLP })).key;
}

/** STIX marking definitions as tests post them: the TLP 1.0 ones (read as their TLP 2.0 levels) and the TLP 2.0 ones, by name. */
export const TLP1_REFS = {
  WHITE: 'marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9',
  GREEN: 'marking-definition--34098fce-860f-48ae-8e50-ebd3cc5e41da',
  AMBER: 'marking-definition--f88d31f6-486f-44da-b317-01333bde0b82',
  RED: 'marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed',
};
export const TLP2_REFS = {
  CLEAR: 'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487',
  GREEN: 'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb',
  AMBER: 'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421',
  'AMBER+STRICT': 'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003',
  RED: 'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1',
};
/** A marking definition that is no TLP (a statement): ignored on input. */
export const STATEMENT_REF = 'marking-definition--1d7a6c1f-0b1c-4a5e-9f3d-2b8e7c6a5d4f';
