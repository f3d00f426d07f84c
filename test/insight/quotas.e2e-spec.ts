import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';
import { completeAs, executorKey, fleetTake, type FleetItem } from './executor-support.js';
import { domainParams, GOOD_RESULT, registerSchema, registerTask, VERDICT_SCHEMA, viewTask } from './insight-support.js';

describe('quotas per schema across instances (extensions §16)', () => {
  let t: TestApp;
  let second: TestApp;
  let key: string;
  const quota = (method: 'put' | 'get' | 'delete', schemaID: string, body?: object) => {
    const request = t.insight[method](`/insight/quotas/${schemaID}`);
    return body === undefined ? request : request.send(body);
  };

  beforeAll(async () => {
    [t, second] = await createInstances(2, { TASK_LEASE_SECONDS: '60' });
    await registerSchema(t);
    await registerSchema(t, { ...VERDICT_SCHEMA, schemaID: 'paid', title: 'Paid' });
    await registerSchema(t, { ...VERDICT_SCHEMA, schemaID: 'capped', title: 'Capped' });
    key = await executorKey(t);
  });
  afterAll(() => closeInstances([t, second]));

  it('hands out no more than the minute allows across two instances, keeps the rest waiting, and serves other schemas', async () => {
    expect((await quota('put', 'paid', { perMinute: 5, perDay: 1000 })).status).toBe(200);
    const paid: string[] = [];
    for (let i = 0; i < 12; i++) paid.push(await registerTask(t, { ...domainParams(`paid-${i}.example`), schemaID: 'paid' }));
    const free = await registerTask(t, domainParams('free.example'));

    // Eight executors on two instances race for the queue.
    const takes = await Promise.all(Array.from({ length: 8 }, (_, i) => fleetTake(i % 2 ? second : t, key, { limit: 3 })));
    const taken = takes.flat();
    expect(taken.filter((item) => paid.includes(item.id))).toHaveLength(5);
    expect(taken.map((item) => item.id)).toContain(free);
    expect(new Set(taken.map((item) => item.id)).size).toBe(taken.length);
    for (const id of paid) expect((await viewTask(t, id)).state).toBe('Pending');

    const view = await quota('get', 'paid');
    expect(view.body).toEqual({
      schemaID: 'paid',
      perMinute: 5,
      perDay: 1000,
      used: { minute: 5, hour: 5, day: 5, leased: 5 },
      nextUnitAt: expect.stringMatching(/:00\.000Z$/),
    });
    // The next minute (the clock we control: the window started a minute ago) frees five more.
    await t.db.query(`UPDATE insight_quota SET minute_start = minute_start - interval '1 minute'`);
    expect((await fleetTake(second, key, { limit: 100 })).filter((item) => paid.includes(item.id))).toHaveLength(5);
    expect((await quota('delete', 'paid')).status).toBe(204);
    expect((await fleetTake(t, key, { limit: 100 })).filter((item) => paid.includes(item.id))).toHaveLength(2);
  });

  it('keeps fewer than maxLeased of a schema leased, handing out more as leases end', async () => {
    await quota('put', 'capped', { maxLeased: 2 });
    for (let i = 0; i < 4; i++) await registerTask(t, { ...domainParams(`leased-${i}.example`), schemaID: 'capped' });
    // Six executors on two instances race: two leases in all.
    const first = (await Promise.all(Array.from({ length: 6 }, (_, i) => fleetTake(i % 2 ? second : t, key, { schemas: ['capped'] })))).flat();
    expect(first).toHaveLength(2);
    expect(await fleetTake(second, key, { schemas: ['capped'] })).toEqual([]);
    const done: FleetItem = first[0];
    expect((await completeAs(t, key, { taskID: done.id, leaseToken: done.leaseToken, result: GOOD_RESULT })).status).toBe(204);
    expect(await fleetTake(second, key, { schemas: ['capped'] })).toHaveLength(1);
    expect((await quota('get', 'capped')).body.used.leased).toBe(2);
    await quota('delete', 'capped');
  });

  it('refuses bad quotas: no limit or a non-positive one (400), an unknown schema (422), a missing quota (404)', async () => {
    for (const body of [{}, { perMinute: 0 }, { perHour: -1 }, { perDay: 1.5 }, { maxLeased: 'x' }, { perMinute: 1, extra: 1 }]) {
      const response = await quota('put', 'paid', body);
      expect([response.status, response.body.code]).toEqual([400, 'InvalidData']);
    }
    const unknown = await quota('put', 'no-such-schema', { perMinute: 1 });
    expect([unknown.status, unknown.body.code]).toEqual([422, 'SchemaNotFound']);
    for (const method of ['get', 'delete'] as const) {
      const missing = await quota(method, 'verdict');
      expect([missing.status, missing.body.code]).toEqual([404, 'QuotaNotFound']);
    }
  });
});
