import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { completeAs, executorKey, expireLease, failAs, fleetTake, rowVersion, viewWithAttempts } from './executor-support.js';
import { domainParams, GOOD_RESULT, registerSchema, registerTask, viewTask } from './insight-support.js';

const OTHER_RESULT = { ...GOOD_RESULT, context: { verdict: 'benign' } };
const ERROR = { code: 'SandboxCrash', message: 'the sandbox died' };

describe('fencing: lease tokens per attempt (extensions §16)', () => {
  let t: TestApp;
  let a: string;
  let b: string;

  beforeAll(async () => {
    t = await createTestApp({ TASK_LEASE_SECONDS: '60', TASK_MAX_DELIVERIES: '3' });
    await registerSchema(t);
    [a, b] = [await executorKey(t), await executorKey(t)];
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses the late report of an executor whose lease ran out once another took over; the other result stands', async () => {
    const id = await registerTask(t);
    const [first] = await fleetTake(t, a, { executor: 'a' });
    expect(first).toEqual({
      id,
      createdAt: expect.any(String),
      params: domainParams(),
      attempt: 1,
      leaseToken: expect.stringMatching(/^[0-9a-f]{64}$/),
      leaseExpiresAt: expect.any(String),
    });
    await expireLease(t, id);
    const [second] = await fleetTake(t, b, { executor: 'b' });
    expect([second.id, second.attempt]).toEqual([id, 2]);
    expect(second.leaseToken).not.toBe(first.leaseToken);

    // A is late: with its token, and without one (B, another key, holds a live lease).
    for (const late of [
      await completeAs(t, a, { taskID: id, leaseToken: first.leaseToken, result: OTHER_RESULT }),
      await failAs(t, a, { taskID: id, leaseToken: first.leaseToken, error: ERROR }),
      await completeAs(t, a, { taskID: id, result: OTHER_RESULT }),
    ]) {
      expect([late.status, late.body.code]).toEqual([409, 'LeaseLost']);
    }
    expect((await completeAs(t, b, { taskID: id, leaseToken: second.leaseToken, result: GOOD_RESULT })).status).toBe(204);

    // Once the task is finished, the earlier token is still LeaseLost, and B's result stands.
    const after = await completeAs(t, a, { taskID: id, leaseToken: first.leaseToken, result: OTHER_RESULT });
    expect([after.status, after.body.code]).toEqual([409, 'LeaseLost']);
    const view = await viewWithAttempts(t, id);
    expect(view).toMatchObject({ state: 'Completed', result: GOOD_RESULT });
    expect(view.attempts).toEqual([
      { attempt: 1, executor: 'a', keyID: expect.any(Number), takenAt: expect.any(String), endedAt: expect.any(String), outcome: 'leaseExpired', error: null },
      { attempt: 2, executor: 'b', keyID: expect.any(Number), takenAt: expect.any(String), endedAt: expect.any(String), outcome: 'completed', error: null },
    ]);
    expect(view.attempts[0].keyID).not.toBe(view.attempts[1].keyID);
    // The product's view is unchanged without `attempts=true`.
    expect(await viewTask(t, id)).toEqual({ id, params: domainParams(), state: 'Completed', result: GOOD_RESULT });
  });

  it('answers a replayed report as the first time and changes nothing; a different report with that token is InvalidState', async () => {
    const id = await registerTask(t);
    const [item] = await fleetTake(t, a);
    const report = { taskID: id, leaseToken: item.leaseToken, result: GOOD_RESULT };
    expect((await completeAs(t, a, report)).status).toBe(204);
    const version = await rowVersion(t, id);
    expect((await completeAs(t, a, report)).status).toBe(204);
    expect((await completeAs(t, b, report)).status).toBe(204);
    expect(await rowVersion(t, id)).toBe(version);

    for (const different of [
      await completeAs(t, a, { ...report, result: OTHER_RESULT }),
      await failAs(t, a, { taskID: id, leaseToken: item.leaseToken, error: ERROR }),
    ]) {
      expect([different.status, different.body.code]).toEqual([422, 'InvalidState']);
    }
    expect(await rowVersion(t, id)).toBe(version);
    expect((await viewTask(t, id)).result).toEqual(GOOD_RESULT);

    // A failure replays the same way.
    const failing = await registerTask(t, domainParams('failing.example'));
    const [taken] = await fleetTake(t, a);
    const failure = { taskID: failing, leaseToken: taken.leaseToken, error: ERROR };
    expect((await failAs(t, a, failure)).status).toBe(204);
    expect((await failAs(t, a, failure)).status).toBe(204);
    expect((await viewTask(t, failing)).error).toEqual(ERROR);
  });

  it('accepts a report without a token from the same key, and from another key only when no live lease is held', async () => {
    const own = await registerTask(t, domainParams('own.example'));
    await fleetTake(t, a);
    expect((await completeAs(t, a, { taskID: own, result: GOOD_RESULT })).status).toBe(204);

    const other = await registerTask(t, domainParams('other.example'));
    await fleetTake(t, a);
    const version = await rowVersion(t, other);
    const refused = await completeAs(t, b, { taskID: other, result: OTHER_RESULT });
    expect([refused.status, refused.body.code]).toEqual([409, 'LeaseLost']);
    const refusedFail = await failAs(t, b, { taskID: other, error: ERROR });
    expect([refusedFail.status, refusedFail.body.code]).toEqual([409, 'LeaseLost']);
    expect(await rowVersion(t, other)).toBe(version);
    expect((await viewTask(t, other)).state).toBe('Pending');

    // A's lease ran out and nobody took the task since: any key's report counts, as the product's client expects.
    await expireLease(t, other);
    expect((await completeAs(t, b, { taskID: other, result: OTHER_RESULT })).status).toBe(204);
    expect((await viewTask(t, other)).result).toEqual(OTHER_RESULT);
  });

  it('refuses malformed and unknown tokens without changing the task', async () => {
    const id = await registerTask(t, domainParams('tokens.example'));
    const [item] = await fleetTake(t, a);
    const version = await rowVersion(t, id);
    for (const leaseToken of ['', 'x'.repeat(64), item.leaseToken.toUpperCase(), item.leaseToken.slice(1), 42]) {
      const response = await completeAs(t, a, { taskID: id, leaseToken, result: GOOD_RESULT });
      expect([response.status, response.body.code]).toEqual([400, 'InvalidData']);
    }
    const unknown = await completeAs(t, a, { taskID: id, leaseToken: '0'.repeat(64), result: GOOD_RESULT });
    expect([unknown.status, unknown.body.code]).toEqual([409, 'LeaseLost']);
    const missing = await completeAs(t, a, { taskID: '00000000-0000-4000-8000-000000000000', leaseToken: item.leaseToken, result: GOOD_RESULT });
    expect([missing.status, missing.body.code]).toEqual([422, 'TaskNotFound']);
    expect(await rowVersion(t, id)).toBe(version);
  });

  it('keeps the product queue item for a take without executor or schemas, and stores only a hash of the token', async () => {
    const id = await registerTask(t, domainParams('plain.example'));
    const response = await t.insight.as(a).take(10);
    expect(response.body).toEqual([{ id, createdAt: expect.any(String), params: domainParams('plain.example') }]);
    const { rows } = await t.db.query(`SELECT encode(lease_token_hash, 'hex') AS hash FROM insight_task WHERE id = $1`, [id]);
    expect(rows[0].hash).toMatch(/^[0-9a-f]{64}$/);
  });
});
