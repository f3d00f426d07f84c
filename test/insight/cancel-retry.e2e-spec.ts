import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { completeAs, executorKey, expireLease, failAs, fleetTake, heartbeatAs, post, viewWithAttempts } from './executor-support.js';
import { domainParams, GOOD_RESULT, registerSchema, registerTask, viewTask } from './insight-support.js';

describe('cancel, retry and dead letters (extensions §16)', () => {
  let t: TestApp;
  let key: string;
  const cancel = (id: string) => post(t, t.adminKey, `/insight/tasks/${id}/cancel`, {});
  const retry = (id: string) => post(t, t.adminKey, `/insight/tasks/${id}/retry`, {});
  const listed = async (query: string) => {
    const response = await t.insight.tasks(`?${query}`);
    expect(response.status).toBe(200);
    return (response.body as { id: string }[]).map((task) => task.id);
  };

  beforeAll(async () => {
    t = await createTestApp({ TASK_LEASE_SECONDS: '60', TASK_MAX_DELIVERIES: '2' });
    await registerSchema(t);
    key = await executorKey(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('fails a waiting task Cancelled at once; refuses to cancel a finished one', async () => {
    const id = await registerTask(t, domainParams('waiting.example'));
    const response = await cancel(id);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id, state: 'Failed', error: { code: 'Cancelled' } });
    expect(await fleetTake(t, key)).toEqual([]);
    const again = await cancel(id);
    expect([again.status, again.body.code]).toEqual([422, 'InvalidState']);
    expect(again.body.message).toContain('cannot be cancelled');
    const unknown = await cancel('00000000-0000-4000-8000-000000000000');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'NotFound']);
  });

  it('asks the executor of a leased task to stop; its failure of any kind, or its lease ending, makes it Cancelled', async () => {
    const reported = await registerTask(t, domainParams('leased.example'));
    const [item] = await fleetTake(t, key);
    expect((await cancel(reported)).body).toMatchObject({ state: 'Pending', cancelRequested: true });
    expect((await heartbeatAs(t, key, { taskID: reported, leaseToken: item.leaseToken })).body.cancelRequested).toBe(true);
    const error = { code: 'Stopped', message: 'asked to', kind: 'transient' };
    expect((await failAs(t, key, { taskID: reported, leaseToken: item.leaseToken, error })).status).toBe(204);
    expect(await viewTask(t, reported)).toMatchObject({ state: 'Failed', error: { code: 'Cancelled' } });

    const abandoned = await registerTask(t, domainParams('abandoned.example'));
    await fleetTake(t, key);
    await cancel(abandoned);
    await expireLease(t, abandoned);
    expect(await viewTask(t, abandoned)).toMatchObject({ state: 'Failed', error: { code: 'Cancelled' } });
    expect(await fleetTake(t, key)).toEqual([]);

    // A result reported after the cancel still completes the task.
    const finished = await registerTask(t, domainParams('finished.example'));
    const [taken] = await fleetTake(t, key);
    await cancel(finished);
    expect((await completeAs(t, key, { taskID: finished, leaseToken: taken.leaseToken, result: GOOD_RESULT })).status).toBe(204);
    expect((await viewTask(t, finished)).state).toBe('Completed');
  });

  it('finds dead letters by errorCode and retries them with fresh attempts, keeping the earlier ones', async () => {
    const id = await registerTask(t, domainParams('dead.example'));
    for (let i = 0; i < 2; i++) {
      await fleetTake(t, key, { executor: `run-${i}` });
      await expireLease(t, id);
    }
    expect(await listed('errorCode=DeliveryLimitExceeded')).toEqual([id]);
    expect(await listed('errorCode=DeliveryLimitExceeded&schemaID=other')).toEqual([]);
    expect(await listed('errorCode=Cancelled&schemaID=verdict')).toHaveLength(3);

    const retried = await retry(id);
    expect(retried.body).toMatchObject({ id, state: 'Pending' });
    const [item] = await fleetTake(t, key, { executor: 'run-2' });
    expect([item.id, item.attempt]).toEqual([id, 1]);
    expect((await completeAs(t, key, { taskID: id, leaseToken: item.leaseToken, result: GOOD_RESULT })).status).toBe(204);
    const view = await viewWithAttempts(t, id);
    expect(view.attempts.map((attempt) => [attempt.attempt, attempt.executor, attempt.outcome])).toEqual([
      [1, 'run-0', 'leaseExpired'],
      [2, 'run-1', 'leaseExpired'],
      [1, 'run-2', 'completed'],
    ]);
    expect(await listed('errorCode=DeliveryLimitExceeded')).toEqual([]);
    const notFailed = await retry(id);
    expect([notFailed.status, notFailed.body.code]).toEqual([422, 'InvalidState']);
    expect(notFailed.body.message).toContain('only a Failed task can');
  });
});
