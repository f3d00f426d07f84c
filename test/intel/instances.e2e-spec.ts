import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../support/eventually.js';
import { DEFAULT_SCORING_VIEW } from '../support/scoring.js';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';

const schema = (schemaID: string, minimum: number) => ({
  schemaID,
  type: 'object',
  properties: { context: { properties: { size: { type: 'integer', minimum } } } },
});

/** Collections and schema versions cached by one instance follow changes made through another. */
describe('intel caches across instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await createInstances(2);
  });
  afterAll(() => closeInstances([a, b]));

  const as = (app: TestApp) => ({
    post: (path: string, body: object) => app.http().post(path).set('X-Api-Key', app.adminKey).send(body),
    get: (path: string) => app.http().get(path).set('X-Api-Key', app.adminKey),
  });
  const addSized = (app: TestApp, collection: string, size: number) =>
    as(app).post(`/intel/collections/${collection}/objects`, {
      type: 'DomainName',
      keys: [{ type: 'DomainName', value: `s${size}.example` }],
      context: { size },
    });

  it('a schema PUT through one instance applies to the next write on the other', async () => {
    expect((await as(a).post('/intel/schemas', schema('sized', 0))).status).toBe(201);
    expect((await as(a).post('/intel/collections', { name: 'sized', schemaID: 'sized' })).status).toBe(201);
    // B validates against version 1 (and caches it).
    expect((await addSized(b, 'sized', 5)).status).toBe(204);

    const tag = (await as(a).get('/intel/schemas/sized')).headers.etag as string;
    const put = await a.http().put('/intel/schemas/sized').set('X-Api-Key', a.adminKey).set('If-Match', tag).send(schema('sized', 10));
    expect(put.status).toBe(204);
    await eventually(async () => (await addSized(b, 'sized', 6)).status === 422);
    const refused = await addSized(b, 'sized', 7);
    expect(refused.body.code).toBe('SchemaCheckFail');
  });

  it('a collection PATCH through one instance changes its tag and schema on the other', async () => {
    expect((await as(a).post('/intel/schemas', schema('loose', 0))).status).toBe(201);
    expect((await as(a).post('/intel/schemas', schema('strict', 100))).status).toBe(201);
    expect((await as(a).post('/intel/collections', { name: 'moving', schemaID: 'loose' })).status).toBe(201);
    const before = await as(b).get('/intel/collections/moving');
    expect(before.body).toEqual({ name: 'moving', schemaID: 'loose', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
    expect((await addSized(b, 'moving', 1)).status).toBe(204);

    const patch = await a
      .http()
      .patch('/intel/collections/moving')
      .set('X-Api-Key', a.adminKey)
      .set('If-Match', before.headers.etag as string)
      .send({ schemaID: 'strict' });
    expect(patch.status).toBe(204);
    // The same instance answers with the new state at once.
    expect((await as(a).get('/intel/collections/moving')).body).toEqual({
      name: 'moving',
      schemaID: 'strict',
      defaultTLP: 'TLP:CLEAR',
      scoring: DEFAULT_SCORING_VIEW,
    });
    await eventually(async () => (await as(b).get('/intel/collections/moving')).headers.etag !== before.headers.etag);
    expect((await as(b).get('/intel/collections/moving')).body).toEqual({
      name: 'moving',
      schemaID: 'strict',
      defaultTLP: 'TLP:CLEAR',
      scoring: DEFAULT_SCORING_VIEW,
    });
    expect((await addSized(b, 'moving', 2)).body.code).toBe('SchemaCheckFail');
  });
});
