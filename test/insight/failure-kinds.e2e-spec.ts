import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { executorKey, expireLease, failAs, fleetTake, viewWithAttempts } from './executor-support.js';
import { domainParams, registerSchema, registerTask, VERDICT_SCHEMA, viewTask } from './insight-support.js';

const BASE = 100;
const MAX = 150;

/** Seconds until the task may be taken again (the database clock). */
async function backOff(t: TestApp, taskID: string): Promise<number> {
  const { rows } = await t.db.query(`SELECT extract(epoch FROM available_at - now())::float8 AS s FROM insight_task WHERE id = $1`, [taskID]);
  return rows[0].s as number;
}

/** The clock we control: the back-off (and any pause of the task's schema) is over. */
async function backOffOver(t: TestApp, taskID: string): Promise<void> {
  await t.db.query(`UPDATE insight_task SET available_at = now() WHERE id = $1`, [taskID]);
  await t.db.query(`DELETE FROM insight_schema_pause`);
}

describe('capabilities and failure kinds (extensions §16)', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({ TASK_LEASE_SECONDS: '60', TASK_MAX_DELIVERIES: '3', TASK_RETRY_BASE_SECONDS: String(BASE), TASK_RETRY_MAX_SECONDS: String(MAX) });
    await registerSchema(t);
    await registerSchema(t, { ...VERDICT_SCHEMA, schemaID: 'sandbox', title: 'Sandbox' });
    key = await executorKey(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('hands out only tasks of the schemas asked for, and records the executor per attempt', async () => {
    const verdict = await registerTask(t, domainParams('filter.example'));
    const sandbox = await registerTask(t, { ...domainParams('filter.example'), schemaID: 'sandbox' });
    expect(await fleetTake(t, key, { schemas: ['no-such-schema'] })).toEqual([]);
    expect((await fleetTake(t, key, { schemas: ['sandbox'], executor: 'cuckoo-7' })).map((item) => item.id)).toEqual([sandbox]);
    expect((await fleetTake(t, key, { schemas: ['verdict', 'sandbox'] })).map((item) => item.id)).toEqual([verdict]);
    expect((await viewWithAttempts(t, sandbox)).attempts).toEqual([
      expect.objectContaining({ attempt: 1, executor: 'cuckoo-7', outcome: null, endedAt: null }),
    ]);
    for (const body of [{ schemas: [] }, { schemas: ['bad id!'] }, { schemas: Array(101).fill('verdict') }, { executor: '' }, { executor: 'x'.repeat(129) }]) {
      const response = await t.insight.as(key).post('/insight/task-queue/executing-tasks', { limit: 1, ...body });
      expect([response.status, response.body.code]).toEqual([400, 'InvalidData']);
    }
  });

  it('puts a transient failure back after a capped, jittered back-off, then fails it AttemptsExhausted', async () => {
    const id = await registerTask(t, { ...domainParams('transient.example'), schemaID: 'sandbox' });
    const expected = [
      [BASE / 2, BASE],
      [MAX / 2, MAX],
    ]; // attempt 1: base × [0.5, 1]; attempt 2: min(max, 2 base) × [0.5, 1]
    for (const [attempt, [low, high]] of expected.entries()) {
      const [item] = await fleetTake(t, key, { schemas: ['sandbox'] });
      expect([item.id, item.attempt]).toEqual([id, attempt + 1]);
      const error = { code: 'Timeout', message: `attempt ${attempt + 1} timed out`, kind: 'transient' };
      expect((await failAs(t, key, { taskID: id, leaseToken: item.leaseToken, error })).status).toBe(204);
      expect((await viewTask(t, id)).state).toBe('Pending');
      const seconds = await backOff(t, id);
      expect(seconds).toBeGreaterThan(low - 2);
      expect(seconds).toBeLessThanOrEqual(high);
      expect(await fleetTake(t, key, { schemas: ['sandbox'] })).toEqual([]);
      await backOffOver(t, id);
    }
    const [last] = await fleetTake(t, key, { schemas: ['sandbox'] });
    expect(last.attempt).toBe(3);
    const error = { code: 'Timeout', message: 'third time', kind: 'transient' };
    expect((await failAs(t, key, { taskID: id, leaseToken: last.leaseToken, error })).status).toBe(204);
    const view = await viewWithAttempts(t, id);
    expect(view.state).toBe('Failed');
    expect(view.error).toEqual({
      code: 'AttemptsExhausted',
      message: 'attempt 3 of 3 failed transiently; its error is lastError',
      lastError: { code: 'Timeout', message: 'third time' },
    });
    const listed = await t.insight.tasks('?errorCode=AttemptsExhausted');
    expect(listed.body).toEqual([expect.objectContaining({ id, error: view.error })]);
    expect(view.attempts.map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([
      [1, 'transient'],
      [2, 'transient'],
      [3, 'transient'],
    ]);
    expect(view.attempts[2].error).toEqual({ code: 'Timeout', message: 'third time' });
  });

  it('holds a rate-limited task and its whole schema back without using an attempt', async () => {
    const limited = await registerTask(t, { ...domainParams('limited.example'), schemaID: 'sandbox' });
    const [item] = await fleetTake(t, key, { schemas: ['sandbox'] });
    const error = { code: 'QuotaExceeded', message: 'VirusTotal said 429', kind: 'rateLimited', retryAfterSeconds: 600 };
    expect((await failAs(t, key, { taskID: limited, leaseToken: item.leaseToken, error })).status).toBe(204);
    expect(await backOff(t, limited)).toBeGreaterThan(590);

    const sibling = await registerTask(t, { ...domainParams('sibling.example'), schemaID: 'sandbox' });
    const other = await registerTask(t, domainParams('other-schema.example'));
    expect((await fleetTake(t, key)).map((taken) => taken.id)).toEqual([other]);
    expect((await viewTask(t, sibling)).state).toBe('Pending');

    await backOffOver(t, limited);
    const again = await fleetTake(t, key, { schemas: ['sandbox'] });
    expect(again.map((taken) => [taken.id, taken.attempt])).toEqual([
      [limited, 1],
      [sibling, 1],
    ]);
    expect((await viewWithAttempts(t, limited)).attempts.map((attempt) => attempt.outcome)).toEqual(['rateLimited', null]);
  });

  it('counts an expired lease as an attempt and fails the task DeliveryLimitExceeded after the last', async () => {
    const id = await registerTask(t, domainParams('expiring.example'));
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [item] = await fleetTake(t, key, { schemas: ['verdict'] });
      expect([item.id, item.attempt]).toEqual([id, attempt]);
      await expireLease(t, id);
    }
    const view = await viewWithAttempts(t, id);
    expect(view.state).toBe('Failed');
    expect((view.error as { code: string }).code).toBe('DeliveryLimitExceeded');
    expect(view.attempts.map((attempt) => attempt.outcome)).toEqual(['leaseExpired', 'leaseExpired', 'leaseExpired']);
  });

  it('refuses malformed failure kinds (400), changing nothing', async () => {
    const id = await registerTask(t, domainParams('kinds.example'));
    const [item] = await fleetTake(t, key, { schemas: ['verdict'] });
    for (const error of [
      { code: 'E', message: 'm', kind: 'sometimes' },
      { code: 'E', message: 'm', kind: 'rateLimited' },
      { code: 'E', message: 'm', kind: 'rateLimited', retryAfterSeconds: 0 },
      { code: 'E', message: 'm', kind: 'rateLimited', retryAfterSeconds: 86401 },
      { code: 'E', message: 'm', kind: 'transient', retryAfterSeconds: 5 },
      { code: 'E', message: 'm', retryAfterSeconds: 5 },
    ]) {
      const response = await failAs(t, key, { taskID: id, leaseToken: item.leaseToken, error });
      expect([response.status, response.body.code]).toEqual([400, 'InvalidData']);
    }
    expect((await viewWithAttempts(t, id)).attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: null })]);
  });
});
