import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InvalidationBus } from '../../src/database/invalidation-bus.js';
import { registerSchema, registerTask } from '../insight/insight-support.js';
import { createCollection, listAll, viewOf } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { eventually } from '../support/eventually.js';
import { cursorOf, parseLinks } from '../support/factories.js';
import { closeInstances, createInstances, createTestApp, type TestApp } from '../support/test-app.js';

const waitersOf = (t: TestApp) => t.app.get(InvalidationBus).waiters;

const domain = (name: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value: name }], context: {} });

/** Long-polls on the change feed, the task queue and the task view, across two instances on one database. */
describe('long-poll (wait)', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    // A small pool: 200 waiters must not need a connection each.
    [a, b] = await createInstances(2, { DATABASE_POOL_SIZE: '10' });
    await createCollection(a, 'polled');
    await registerSchema(a);
  });
  afterAll(() => closeInstances([a, b]));

  const feed = (t: TestApp, cursor: string, query = '') =>
    t.http().get(`/intel/collections/polled/objects/changes?cursor=${cursor}${query}`).set('X-Api-Key', t.adminKey);
  const add = (t: TestApp, name: string) => t.http().post('/intel/collections/polled/objects').set('X-Api-Key', t.adminKey).send(domain(name));
  const takeWaiting = (t: TestApp, limit: number, wait: number) =>
    t.http().post('/insight/task-queue/executing-tasks').set('X-Api-Key', t.adminKey).send({ limit, wait });

  it('a follower waiting on one instance is answered by a commit on the other', async () => {
    const { changesCursor } = await listAll(a, 'polled');
    const waiting = feed(a, changesCursor, '&wait=30&limit=5').then((response) => response);
    await eventually(() => waitersOf(a) === 1);
    expect((await add(b, 'pushed.example')).status).toBe(204);
    const response = await waiting;
    expect(response.status).toBe(200);
    expect(response.body).toEqual([{ operation: 'Add', object: viewOf(domain('pushed.example')) }]);
    // The paging rule holds: a non-empty page links the position after it, carrying limit and wait.
    const next = parseLinks(response.headers.link as string).next;
    expect(new URL(next, 'http://x').searchParams.get('wait')).toBe('30');
    expect(new URL(next, 'http://x').searchParams.get('limit')).toBe('5');
    expect(waitersOf(a)).toBe(0);
  });

  it('a wait that runs out answers an empty page without a next link; without wait nothing is held', async () => {
    const { changesCursor } = await listAll(a, 'polled');
    const timedOut = await feed(a, changesCursor, '&wait=1');
    expect(timedOut.status).toBe(200);
    expect(timedOut.body).toEqual([]);
    expect(parseLinks(timedOut.headers.link as string | undefined).next).toBeUndefined();
    const plain = await feed(a, changesCursor);
    expect({ status: plain.status, body: plain.body, link: plain.headers.link }).toEqual({ status: 200, body: [], link: undefined });
    // Changes already past the cursor are answered at once, whatever the wait.
    expect((await add(a, 'already.example')).status).toBe(204);
    const immediate = await feed(a, changesCursor, '&wait=60');
    expect(immediate.body).toEqual([{ operation: 'Add', object: viewOf(domain('already.example')) }]);
    expect(cursorOf(parseLinks(immediate.headers.link as string).next)).toEqual(expect.any(String));
  });

  it('refuses a wait outside 0-60 or not an integer, in the query and in the body', async () => {
    const { changesCursor } = await listAll(a, 'polled');
    for (const bad of ['61', '-1', '1.5', 'abc', '', '1e1']) {
      expectError(await feed(a, changesCursor, `&wait=${bad}`), 'InvalidQueryArgument');
    }
    const task = await registerTask(a);
    for (const bad of ['61', 'x', '-3']) {
      const response = await a.http().get(`/insight/tasks/${task}?wait=${bad}`).set('X-Api-Key', a.adminKey);
      expectError(response, 'InvalidQueryArgument');
    }
    for (const bad of [61, -1, 1.5, '5', true, [1]]) {
      const response = await a.http().post('/insight/task-queue/executing-tasks').set('X-Api-Key', a.adminKey).send({ limit: 1, wait: bad });
      expectError(response, 'InvalidData');
    }
    // Nothing was taken by the refused requests.
    const taken = await takeWaiting(a, 10, 0);
    expect((taken.body as { id: string }[]).map((item) => item.id)).toEqual([task]);
  });

  it('a client that disconnects releases its waiter at once', async () => {
    const { changesCursor } = await listAll(a, 'polled');
    const url = new URL(`${a.url}/intel/collections/polled/objects/changes?cursor=${changesCursor}&wait=60`);
    const requests = [0, 1, 2].map(() => {
      const request = http.get(url, { headers: { 'X-Api-Key': a.adminKey } });
      request.on('error', () => undefined);
      return request;
    });
    await eventually(() => waitersOf(a) === 3);
    for (const request of requests) request.destroy();
    // Far sooner than the 60 s wait: 5 s at most here.
    await eventually(() => waitersOf(a) === 0);
  });

  it('200 concurrent waiters on a pool of 10 hold no connection and are all answered by one commit', async () => {
    const { changesCursor } = await listAll(a, 'polled');
    const waiting = Array.from({ length: 200 }, (_, i) => feed(i % 2 ? a : b, changesCursor, '&wait=30'));
    const all = Promise.all(waiting);
    await eventually(() => waitersOf(a) === 100 && waitersOf(b) === 100);
    // No connection is busy on behalf of the waiters while they wait: a waiter holding one would keep it
    // busy for its whole 30 s, while a background job's statement (expiry, a schedule tick) or autovacuum
    // may be caught running at any instant, so the check is that the busy set empties, not a single sample.
    await eventually(async () => {
      const busy = await a.db.query(
        `SELECT state, left(query, 80) AS query FROM pg_stat_activity
          WHERE datname = current_database() AND backend_type = 'client backend'
            AND state <> 'idle' AND pid <> pg_backend_pid()`,
      );
      expect(busy.rows).toEqual([]);
    });
    expect(waitersOf(a) + waitersOf(b)).toBe(200);
    // The pools are free: other requests are served while the waiters are held.
    expect((await a.http().get('/intel/collections/polled').set('X-Api-Key', a.adminKey)).status).toBe(200);
    expect((await add(a, 'crowd.example')).status).toBe(204);
    const responses = await all;
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.body).toEqual([{ operation: 'Add', object: viewOf(domain('crowd.example')) }]);
    }
  });

  it('racing waiting executors on both instances never receive a task twice', async () => {
    // Drain whatever earlier tests left.
    while ((await takeWaiting(a, 1000, 0)).body.length > 0);
    const received: string[] = [];
    let registered = 0;
    const executor = async (t: TestApp) => {
      while (received.length < 12) {
        const response = await takeWaiting(t, 1, 3);
        expect(response.status).toBe(200);
        received.push(...(response.body as { id: string }[]).map((item) => item.id));
        if (registered === 12 && response.body.length === 0) break;
      }
    };
    const executors = [a, b, a, b, a, b].map(executor);
    await eventually(() => waitersOf(a) + waitersOf(b) === 6);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push(await registerTask(i % 2 ? a : b));
      registered++;
    }
    await Promise.all(executors);
    expect([...received].sort()).toEqual([...ids].sort());
  });

  it('a task view with wait answers when the task finishes on the other instance', async () => {
    while ((await takeWaiting(a, 1000, 0)).body.length > 0);
    const id = await registerTask(a);
    const view = a
      .http()
      .get(`/insight/tasks/${id}?wait=30`)
      .set('X-Api-Key', a.adminKey)
      .then((response) => response);
    await eventually(() => waitersOf(a) === 1);
    expect((await takeWaiting(b, 1, 0)).body).toHaveLength(1);
    const failed = await b
      .http()
      .post('/insight/task-queue/failed-tasks')
      .set('X-Api-Key', b.adminKey)
      .send({ taskID: id, error: { code: 'NoAnswer', message: 'nothing found' } });
    expect(failed.status).toBe(204);
    const response = await view;
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id, state: 'Failed', error: { code: 'NoAnswer' } });
  });
});

describe('long-poll: leases and shutdown', () => {
  it('a waiting executor receives a task whose lease ran out, with no commit to announce it', async () => {
    const t = await createTestApp({ TASK_LEASE_SECONDS: '1' });
    try {
      await registerSchema(t);
      const id = await registerTask(t);
      const take = (wait: number) => t.http().post('/insight/task-queue/executing-tasks').set('X-Api-Key', t.adminKey).send({ limit: 1, wait });
      expect((await take(0)).body).toHaveLength(1);
      const again = await take(20);
      expect((again.body as { id: string }[]).map((item) => item.id)).toEqual([id]);
    } finally {
      await t.close();
    }
  });

  it('shutdown answers every waiter', async () => {
    const t = await createTestApp();
    await createCollection(t, 'closing');
    await registerSchema(t);
    const { changesCursor } = await listAll(t, 'closing');
    const task = await registerTask(t);
    const held = [
      t.http().get(`/intel/collections/closing/objects/changes?cursor=${changesCursor}&wait=60`).set('X-Api-Key', t.adminKey),
      t.http().get(`/insight/tasks/${task}?wait=60`).set('X-Api-Key', t.adminKey),
    ].map((pending) => pending.then((response) => response));
    await eventually(() => waitersOf(t) === 2);
    const closed = t.close();
    const [page, view] = await Promise.all(held);
    await closed;
    expect({ status: page.status, body: page.body }).toEqual({ status: 200, body: [] });
    expect({ status: view.status, state: view.body.state }).toEqual({ status: 200, state: 'Pending' });
  });
});
