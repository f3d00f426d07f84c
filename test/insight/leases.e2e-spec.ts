import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { complete, domainParams, fail, GOOD_RESULT, registerSchema, registerTask, sleep, take, viewTask, type QueueItem } from './insight-support.js';

/** Takes until the queue hands something out (a lease has run out), or gives up after a generous while. */
async function takeAfterExpiry(t: TestApp): Promise<QueueItem[]> {
  for (let attempt = 0; attempt < 60; attempt++) {
    const items = await take(t, 10);
    if (items.length > 0) return items;
    await sleep(250);
  }
  throw new Error('no lease ran out');
}

describe('insight task leases (1 s lease, 3 deliveries)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ TASK_LEASE_SECONDS: '1', TASK_MAX_DELIVERIES: '3' });
    await registerSchema(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('returns a task whose lease ran out to the queue; it stays Pending and a late report still counts', async () => {
    const id = await registerTask(t);
    expect((await take(t, 10)).map((item) => item.id)).toEqual([id]);

    // Executor A's lease runs out: executor B gets the same task.
    const redelivered = await takeAfterExpiry(t);
    expect(redelivered).toEqual([{ id, createdAt: expect.any(String), params: domainParams() }]);
    expect(await viewTask(t, id)).toEqual({ id, params: domainParams(), state: 'Pending' });

    // A reports late: allowed (taken at least once, deliveries left); B's report then finds it final.
    expect((await complete(t, id)).status).toBe(204);
    const late = await fail(t, id);
    expectError(late, 'InvalidState');
    expect((await viewTask(t, id)).state).toBe('Completed');

    // A completed task is never handed out again, even after its lease would have run out.
    await sleep(1200);
    expect(await take(t, 10)).toEqual([]);
  });

  it('fails a task with DeliveryLimitExceeded after its third lease runs out, before and after a take records it', async () => {
    const id = await registerTask(t);
    expect((await take(t, 10)).map((item) => item.id)).toEqual([id]);
    expect((await takeAfterExpiry(t)).map((item) => item.id)).toEqual([id]);
    expect((await takeAfterExpiry(t)).map((item) => item.id)).toEqual([id]);

    // Wait for the third lease to run out, watching the view (no take has happened to record it).
    let view = await viewTask(t, id);
    for (let attempt = 0; attempt < 60 && view.state === 'Pending'; attempt++) {
      await sleep(250);
      view = await viewTask(t, id);
    }
    const failedView = {
      id,
      params: domainParams(),
      state: 'Failed',
      error: { code: 'DeliveryLimitExceeded', message: expect.any(String) },
    };
    expect(view).toEqual(failedView);

    // Reports are refused from now on; the state is judged before the result (even an invalid one).
    for (const response of [await complete(t, id, { ...GOOD_RESULT, context: { verdict: 'weird' } }), await complete(t, id), await fail(t, id)]) {
      expectError(response, 'InvalidState');
    }

    // A take records the failure and does not deliver the task.
    expect(await take(t, 10)).toEqual([]);
    expect(await viewTask(t, id)).toEqual(failedView);
    await sleep(1200);
    expect(await take(t, 10)).toEqual([]);
  });
});
