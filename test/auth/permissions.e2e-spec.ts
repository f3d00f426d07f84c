import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ResourceAction } from '../../src/common/guard/access.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey, tokenFor } from '../support/factories.js';
import { DEFAULT_SCORING_VIEW } from '../support/scoring.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const AUTH = 1;
const INTEL = 2;
const INSIGHT = 3;
const FILEBOX = 4;
const TASKS = 5;
const TASK_QUEUE = 6;

/**
 * decisions §3: `(R, A)` holds when the key has `A` on R, or `AChildren` on R's direct parent; otherwise
 * 403 MissingPermissions. Checked on two children: `tasks` (built-in child of insight) and a collection
 * (a child of intel created with the collection).
 */
describe('the permission rule with child resources', () => {
  let t: TestApp;
  let collectionId: number;
  let otherCollectionId: number;

  const keyWith = async (permissions: { resource: number; actions: ResourceAction[] }[]) => (await createKey(t, { permissions })).key;

  beforeAll(async () => {
    t = await createTestApp();
    const schema = await t
      .http()
      .post('/intel/schemas')
      .set('X-Api-Key', t.adminKey)
      .send({ $schema: 'https://json-schema.org/draft/2020-12/schema', schemaID: 'perm-schema', title: 'Perm', type: 'object' });
    expect(schema.status).toBe(201);
    for (const name of ['perm-coll', 'other-coll']) {
      const created = await t.http().post('/intel/collections').set('X-Api-Key', t.adminKey).send({ name, schemaID: 'perm-schema' });
      expect(created.status).toBe(201);
    }
    const children = await t.http().get('/auth/resources?parentID=2').set('X-Api-Key', t.adminKey);
    expect(children.status).toBe(200);
    const byName = new Map((children.body as { id: number; name: string }[]).map((r) => [r.name, r.id]));
    collectionId = byName.get('perm-coll')!;
    otherCollectionId = byName.get('other-coll')!;
    expect(collectionId).toBeGreaterThan(TASK_QUEUE);
    expect(otherCollectionId).toBeGreaterThan(TASK_QUEUE);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /intel/collections/{name} (Read on the collection, a child of intel)', () => {
    const view = (key: string, name = 'perm-coll') => t.http().get(`/intel/collections/${name}`).set('X-Api-Key', key);

    it('Read on the collection itself is enough', async () => {
      const response = await view(await keyWith([{ resource: collectionId, actions: ['Read'] }]));
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ name: 'perm-coll', schemaID: 'perm-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
    });

    it('ReadChildren on intel (the direct parent) is enough, also through a token', async () => {
      const key = await keyWith([{ resource: INTEL, actions: ['ReadChildren'] }]);
      expect((await view(key)).status).toBe(200);
      const token = await tokenFor(t, key);
      expect((await t.http().get('/intel/collections/perm-coll').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    });

    it.each<[string, { resource: number; actions: ResourceAction[] }[]]>([
      ['Read on intel (the parent itself)', [{ resource: INTEL, actions: ['Read'] }]],
      ['Read on another collection', [{ resource: 0, actions: ['Read'] }]],
      ['Write on the collection', [{ resource: -1, actions: ['Write'] }]],
      ['WriteChildren on intel', [{ resource: INTEL, actions: ['WriteChildren'] }]],
      ['ReadChildren on insight', [{ resource: INSIGHT, actions: ['ReadChildren'] }]],
      ['no permission at all', []],
    ])('%s → 403 MissingPermissions', async (_name, permissions) => {
      const resolved = permissions.map((p) => ({
        ...p,
        resource: p.resource === 0 ? otherCollectionId : p.resource === -1 ? collectionId : p.resource,
      }));
      expectError(await view(await keyWith(resolved)), 'MissingPermissions');
    });

    it('an unknown collection: 404 for a key that may read any child, 403 for others (nothing leaks)', async () => {
      const children = await keyWith([{ resource: INTEL, actions: ['ReadChildren'] }]);
      const single = await keyWith([{ resource: collectionId, actions: ['Read'] }]);
      expect((await view(children, 'no-such-coll')).status).toBe(404);
      expectError(await view(single, 'no-such-coll'), 'MissingPermissions');
    });

    it('Write on the collection by the same rule (PATCH): WriteChildren on intel passes the guard, ReadChildren does not', async () => {
      const patch = (key: string) => t.http().patch('/intel/collections/perm-coll').set('X-Api-Key', key).set('If-Match', '"0"').send({});
      const writer = await patch(await keyWith([{ resource: INTEL, actions: ['WriteChildren'] }]));
      expect([204, 412]).toContain(writer.status);
      expectError(await patch(await keyWith([{ resource: INTEL, actions: ['ReadChildren'] }])), 'MissingPermissions');
    });

    it('a 401 for missing or invalid credentials comes before any permission check', async () => {
      expectError(await t.http().get('/intel/collections/perm-coll'), 'Unauthorized');
      expectError(await t.http().get('/intel/collections/no-such-coll').set('Authorization', 'Bearer nonsense'), 'Unauthorized');
    });
  });

  describe('GET /insight/tasks/{task_id} (Read on tasks, a child of insight)', () => {
    let taskID: string;
    const view = (key: string, id = taskID) => t.http().get(`/insight/tasks/${id}`).set('X-Api-Key', key);

    beforeAll(async () => {
      const schema = await t
        .http()
        .post('/insight/schemas')
        .set('X-Api-Key', t.adminKey)
        .send({ $schema: 'https://json-schema.org/draft/2020-12/schema', schemaID: 'perm-verdict', title: 'Verdict', type: 'object' });
      expect(schema.status).toBe(201);
      const task = await t
        .http()
        .post('/insight/tasks')
        .set('X-Api-Key', t.adminKey)
        .send({ params: { schemaID: 'perm-verdict', objectKeys: [{ type: 'DomainName', value: 'example.com' }] } });
      expect(task.status).toBe(201);
      taskID = task.body.taskID;
    });

    it('Read on tasks is enough', async () => {
      const response = await view(await keyWith([{ resource: TASKS, actions: ['Read'] }]));
      expect(response.status).toBe(200);
      expect(response.body.id).toBe(taskID);
    });

    it('ReadChildren on insight (the direct parent) is enough; an unknown task is then a plain 404', async () => {
      const key = await keyWith([{ resource: INSIGHT, actions: ['ReadChildren'] }]);
      const response = await view(key);
      expect(response.status).toBe(200);
      expect(response.body.id).toBe(taskID);
      expect((await view(key, randomUUID())).status).toBe(404);
    });

    it.each<[string, { resource: number; actions: ResourceAction[] }[]]>([
      ['Read on insight (the parent itself)', [{ resource: INSIGHT, actions: ['Read'] }]],
      ['Write on tasks', [{ resource: TASKS, actions: ['Write'] }]],
      ['WriteChildren on insight', [{ resource: INSIGHT, actions: ['WriteChildren'] }]],
      ['Write on task-queue (a sibling)', [{ resource: TASK_QUEUE, actions: ['Write'] }]],
      ['ReadChildren on intel', [{ resource: INTEL, actions: ['ReadChildren'] }]],
      [
        'everything on auth and filebox',
        [
          { resource: AUTH, actions: ['Read', 'Write', 'ReadChildren', 'WriteChildren'] },
          { resource: FILEBOX, actions: ['Read', 'Write', 'ReadChildren', 'WriteChildren'] },
        ],
      ],
    ])('%s → 403 MissingPermissions', async (_name, permissions) => {
      expectError(await view(await keyWith(permissions)), 'MissingPermissions');
    });

    it('the admin key (all actions on 1–4) reads tasks through ReadChildren on insight', async () => {
      expect((await view(t.adminKey)).status).toBe(200);
    });
  });
});
