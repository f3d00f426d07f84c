import type { TestApp } from '../support/test-app.js';

export const TAXII = 'application/taxii+json;version=2.1';
export const ROOT = '/taxii2/api';

/** A TAXII client as taxii2-client speaks: Basic credentials (the key as password) and the TAXII Accept header. */
export function taxiiClient(t: TestApp, key: string) {
  const withHeaders = <R extends { set: (name: string, value: string) => R; auth: (user: string, password: string) => R }>(request: R) =>
    request.auth('taxii-client', key).set('Accept', TAXII);
  return {
    get: (path: string) => withHeaders(t.http().get(path)).buffer(true).parse(parseJson),
    post: (path: string, body: unknown) =>
      withHeaders(t.http().post(path)).set('Content-Type', TAXII).send(JSON.stringify(body)).buffer(true).parse(parseJson),
    delete: (path: string) => withHeaders(t.http().delete(path)).buffer(true).parse(parseJson),
  };
}

/** Bodies are parsed whatever their media type (supertest parses only the types it knows). */
export function parseJson(res: unknown, callback: (error: Error | null, body: unknown) => void): void {
  const response = res as NodeJS.ReadableStream;
  let text = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => (text += chunk));
  response.on('end', () => {
    try {
      callback(null, text === '' ? undefined : JSON.parse(text));
    } catch (error) {
      callback(error as Error, undefined);
    }
  });
}

/** Registers a schema accepting any context and a collection on it; returns the collection's TAXII id. */
export async function createCollection(t: TestApp, name: string, schema: Record<string, unknown> = {}): Promise<string> {
  await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send({ schemaID: `${name}-schema`, type: 'object', ...schema });
  const created = await t.http().post('/intel/collections').set('X-Api-Key', t.adminKey).send({ name, schemaID: `${name}-schema` });
  if (created.status !== 201) throw new Error(`collection ${name}: ${created.status}`);
  const listed = await taxiiClient(t, t.adminKey).get(`${ROOT}/collections/`);
  return (listed.body as { collections: { id: string; title: string }[] }).collections.find((c) => c.title === name)!.id;
}

export async function resourceIdOf(t: TestApp, name: string): Promise<number> {
  const response = await t.http().get('/auth/resources?parentID=2&limit=1000').set('X-Api-Key', t.adminKey);
  return (response.body as { id: number; name: string }[]).find((resource) => resource.name === name)!.id;
}
