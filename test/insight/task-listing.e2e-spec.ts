import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { BUILTIN_RESOURCES } from '../../src/common/guard/access.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { complete, domainParams, fail, registerSchema, registerTask, take } from './insight-support.js';

describe('GET /insight/tasks', () => {
  let t: TestApp;
  const registered: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    await registerSchema(t);
    for (let n = 0; n < 5; n += 1) registered.push(await registerTask(t, domainParams(`task${n}.example`)));
    const taken = await take(t, 2);
    expect((await complete(t, taken[0].id)).status).toBe(204);
    expect((await fail(t, taken[1].id)).status).toBe(204);
  });

  afterAll(() => t?.close());

  async function listAll(query: string, key = t.adminKey): Promise<{ id: string; state: string }[]> {
    const tasks: { id: string; state: string }[] = [];
    let path: string | undefined = `/insight/tasks?${query}`;
    while (path) {
      const response: Response = await t.insight.as(key).get(path);
      expect(response.status).toBe(200);
      tasks.push(...(response.body as { id: string; state: string }[]));
      path = parseLinks(response.headers.link as string | undefined).next;
    }
    return tasks;
  }

  it('lists every task newest first across pages, each as its own view shows it', async () => {
    const tasks = await listAll('limit=2');
    expect(tasks.map((task) => task.id)).toEqual([...registered].reverse());
    const one = await t.insight.task(registered[0]);
    expect(tasks.find((task) => task.id === registered[0])).toEqual(one.body);
  });

  it('keeps one state, and the filter through the next links', async () => {
    const byState = async (state: string) => (await listAll(`state=${state}&limit=1`)).map((task) => task.state);
    expect(await byState('Completed')).toEqual(['Completed']);
    expect(await byState('Failed')).toEqual(['Failed']);
    expect(await byState('Pending')).toEqual(['Pending', 'Pending', 'Pending']);
  });

  it('refuses bad arguments and keys without Read on tasks', async () => {
    for (const query of ['state=Done', 'cursor=!!', 'cursor=eyJ0IjoxfQ', 'limit=0']) {
      const response = await t.insight.tasks(`?${query}`);
      expect([query, response.status, response.body.code]).toEqual([query, 400, 'InvalidQueryArgument']);
    }
    const queue = await createKey(t, { permissions: [{ resource: BUILTIN_RESOURCES['task-queue'].id, actions: ['Read', 'Write'] }] });
    const refused = await t.insight.as(queue.key).tasks();
    expectError(refused, 'MissingPermissions');
    const reader = await createKey(t, { permissions: [{ resource: BUILTIN_RESOURCES.tasks.id, actions: ['Read'] }] });
    expect(await listAll('', reader.key)).toHaveLength(5);
  });
});
