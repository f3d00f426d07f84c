import { ROOT, taxiiClient } from '../support/clients/taxii.js';
import type { TestApp } from '../support/test-app.js';

// The TAXII client moved to test/support/clients/taxii.ts; re-exported for the suites that import it from here.
export { parseJson, ROOT, TAXII, taxiiClient } from '../support/clients/taxii.js';

/** Registers a schema accepting any context and a collection on it; returns the collection's TAXII id. */
export async function createCollection(t: TestApp, name: string, schema: Record<string, unknown> = {}): Promise<string> {
  await t
    .http()
    .post('/intel/schemas')
    .set('X-Api-Key', t.adminKey)
    .send({ schemaID: `${name}-schema`, type: 'object', ...schema });
  const created = await t
    .http()
    .post('/intel/collections')
    .set('X-Api-Key', t.adminKey)
    .send({ name, schemaID: `${name}-schema` });
  if (created.status !== 201) throw new Error(`collection ${name}: ${created.status}`);
  const listed = await taxiiClient(t, t.adminKey).get(`${ROOT}/collections/`);
  return (listed.body as { collections: { id: string; title: string }[] }).collections.find((c) => c.title === name)!.id;
}

export async function resourceIdOf(t: TestApp, name: string): Promise<number> {
  const response = await t.http().get('/auth/resources?parentID=2&limit=1000').set('X-Api-Key', t.adminKey);
  return (response.body as { id: number; name: string }[]).find((resource) => resource.name === name)!.id;
}
