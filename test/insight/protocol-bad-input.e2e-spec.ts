import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { completeAs, executorKey, fleetTake, post, type FleetItem } from './executor-support.js';
import { domainParams, GOOD_RESULT, registerSchema, registerTask } from './insight-support.js';

const UNKNOWN_TASK = '00000000-0000-4000-8000-000000000000';

/** Every task and quota row with its version: equal snapshots mean no refused request wrote anything. */
async function snapshot(t: TestApp) {
  const tasks = await t.db.query(`SELECT id, xmin::text FROM insight_task ORDER BY id`);
  const quotas = await t.db.query(`SELECT schema_id, xmin::text FROM insight_quota ORDER BY schema_id`);
  return { tasks: tasks.rows, quotas: quotas.rows };
}

describe('executor protocol: bad input is refused with its code and changes nothing (extensions §16, decisions §9)', () => {
  let t: TestApp;
  let key: string;
  let leased: FleetItem;
  let finished: FleetItem;
  let before: Awaited<ReturnType<typeof snapshot>>;

  /** Sends each body and expects each answer to be `status` with `code`. */
  async function expectRefused(path: string, bodies: unknown[], status: number, code: string) {
    for (const body of bodies) {
      const response = await post(t, key, path, body);
      expect({ body, status: response.status, code: response.body.code }).toEqual({ body, status, code });
    }
  }

  beforeAll(async () => {
    t = await createTestApp({ TASK_LEASE_SECONDS: '60' });
    await registerSchema(t);
    key = await executorKey(t);
    await registerTask(t, domainParams('finished.example'));
    [finished] = await fleetTake(t, key);
    expect((await completeAs(t, key, { taskID: finished.id, leaseToken: finished.leaseToken, result: GOOD_RESULT })).status).toBe(204);
    await registerTask(t, domainParams('leased.example'));
    [leased] = await fleetTake(t, key, { limit: 1 });
    await registerTask(t, domainParams('waiting.example'));
    expect((await t.insight.put('/insight/quotas/verdict', { perMinute: 10 })).status).toBe(200);
    before = await snapshot(t);
  });
  afterAll(async () => {
    expect(await snapshot(t)).toEqual(before);
    await t.close();
  });

  it('refuses malformed lease tokens on completions, failures and heartbeats (400 InvalidData)', async () => {
    const tokens = ['', 'x'.repeat(64), leased.leaseToken.toUpperCase(), leased.leaseToken.slice(2), `${leased.leaseToken}00`, 42, [leased.leaseToken], {}];
    const error = { code: 'E', message: 'm', kind: 'transient' };
    for (const leaseToken of tokens) {
      await expectRefused('/insight/task-queue/completed-tasks', [{ taskID: leased.id, leaseToken, result: GOOD_RESULT }], 400, 'InvalidData');
      await expectRefused('/insight/task-queue/failed-tasks', [{ taskID: leased.id, leaseToken, error }], 400, 'InvalidData');
      await expectRefused('/insight/task-queue/heartbeats', [{ taskID: leased.id, leaseToken }], 400, 'InvalidData');
    }
    expect(await snapshot(t)).toEqual(before);
  });

  it('refuses malformed task ids (400 InvalidData), unknown tasks (422 TaskNotFound) and a finished task (422 InvalidState)', async () => {
    const { leaseToken } = leased;
    for (const taskID of ['', 'not-a-uuid', `${leased.id}0`, 7]) {
      await expectRefused('/insight/task-queue/heartbeats', [{ taskID, leaseToken }], 400, 'InvalidData');
      await expectRefused('/insight/task-queue/completed-tasks', [{ taskID, leaseToken, result: GOOD_RESULT }], 400, 'InvalidData');
    }
    await expectRefused(
      '/insight/task-queue/heartbeats',
      [
        { taskID: UNKNOWN_TASK, leaseToken },
        { taskID: UNKNOWN_TASK, leaseToken, progress: { percent: 50 } },
      ],
      422,
      'TaskNotFound',
    );
    await expectRefused('/insight/task-queue/failed-tasks', [{ taskID: UNKNOWN_TASK, leaseToken, error: { code: 'E', message: 'm' } }], 422, 'TaskNotFound');
    await expectRefused(
      '/insight/task-queue/heartbeats',
      [{ taskID: finished.id, leaseToken: finished.leaseToken, progress: { percent: 50 } }],
      422,
      'InvalidState',
    );
    expect(await snapshot(t)).toEqual(before);
  });

  it('refuses malformed heartbeats, failures and takes (400 InvalidData)', async () => {
    const beat = { taskID: leased.id, leaseToken: leased.leaseToken };
    await expectRefused(
      '/insight/task-queue/heartbeats',
      [
        { ...beat, extendSeconds: '30' },
        { ...beat, extendSeconds: -5 },
        { ...beat, progress: { percent: -1 } },
        { ...beat, progress: { percent: '50' } },
        { ...beat, progress: 50 },
        { ...beat, progress: { percent: 5, message: 'nul \u0000' } },
        { ...beat, unknown: true },
      ],
      400,
      'InvalidData',
    );
    await expectRefused(
      '/insight/task-queue/failed-tasks',
      [
        { ...beat, error: 'crashed' },
        { ...beat, error: { code: '', message: 'm' } },
        { ...beat, error: { code: 'E', message: 'm', kind: 'Transient' } },
        { ...beat, error: { code: 'E', message: 'm', kind: 'rateLimited', retryAfterSeconds: '60' } },
        { ...beat, error: { code: 'E', message: 'm', kind: 'rateLimited', retryAfterSeconds: 2.5 } },
      ],
      400,
      'InvalidData',
    );
    await expectRefused(
      '/insight/task-queue/executing-tasks',
      [
        { limit: 1, schemas: 'verdict' },
        { limit: 1, schemas: [1] },
        { limit: 1, schemas: [''] },
        { limit: 1, executor: 5 },
        { limit: 1, executor: 'nul \u0000' },
      ],
      400,
      'InvalidData',
    );
    expect(await snapshot(t)).toEqual(before);
  });

  it('refuses malformed priorities, attempts and dedupe modes (400 InvalidData), storing nothing', async () => {
    const register = (options: Record<string, unknown>) => ({ params: domainParams('refused.example'), ...options });
    await expectRefused(
      '/insight/tasks',
      [
        register({ priority: '1' }),
        register({ priority: true }),
        register({ priority: [1] }),
        register({ priority: 1e9 }),
        register({ maxAttempts: '3' }),
        register({ maxAttempts: -1 }),
        register({ maxAttempts: 2.5 }),
        register({ dedupe: 'INFLIGHT' }),
        register({ dedupe: '' }),
        register({ dedupe: ['inflight'] }),
        register({ dedupe: 1 }),
        register({ maxAgeSeconds: 60 }),
        register({ dedupe: 'none', maxAgeSeconds: 60 }),
        register({ dedupe: 'result', maxAgeSeconds: '60' }),
      ],
      400,
      'InvalidData',
    );
    expect(await snapshot(t)).toEqual(before);
  });

  it('refuses malformed quotas (400), unknown schemas (422 SchemaNotFound); the quota stays as it was', async () => {
    const put = (schemaID: string, body: unknown) => t.insight.put(`/insight/quotas/${schemaID}`, body as object);
    for (const body of [{ perMinute: '5' }, { perMinute: null }, { perHour: 0, perDay: 10 }, { maxLeased: -1 }, { perDay: 1e20 }, [], { perminute: 5 }]) {
      const response = await put('verdict', body);
      expect({ body, status: response.status, code: response.body.code }).toEqual({ body, status: 400, code: 'InvalidData' });
    }
    const unknown = await put('no-such-schema', { perMinute: 5 });
    expect([unknown.status, unknown.body.code]).toEqual([422, 'SchemaNotFound']);
    const malformedId = await put('bad%20id!', { perMinute: 5 });
    expect([malformedId.status, malformedId.body.code]).toEqual([400, 'InvalidPathArgument']);
    const view = await t.insight.get('/insight/quotas/verdict');
    expect(view.body).toMatchObject({ schemaID: 'verdict', perMinute: 10 });
    expect(view.body).not.toHaveProperty('perHour');
    expect(await snapshot(t)).toEqual(before);
  });

  it('refuses cancel and retry of unknown or malformed ids (404 NotFound) and a bad attempts flag (400)', async () => {
    for (const id of [UNKNOWN_TASK, 'not-a-uuid']) {
      for (const action of ['cancel', 'retry']) {
        const response = await post(t, t.adminKey, `/insight/tasks/${id}/${action}`, {});
        expect([id, action, response.status, response.body.code]).toEqual([id, action, 404, 'NotFound']);
      }
    }
    const retryPending = await post(t, t.adminKey, `/insight/tasks/${leased.id}/retry`, {});
    expect([retryPending.status, retryPending.body.code]).toEqual([422, 'InvalidState']);
    const flag = await t.insight.get(`/insight/tasks/${leased.id}?attempts=yes`);
    expect([flag.status, flag.body.code]).toEqual([400, 'InvalidQueryArgument']);
    for (const query of ['errorCode=%00', `errorCode=${'x'.repeat(257)}`, 'schemaID=bad%20id!']) {
      const response = await t.insight.tasks(`?${query}`);
      expect([query, response.status, response.body.code]).toEqual([query, 400, 'InvalidQueryArgument']);
    }
    expect(await snapshot(t)).toEqual(before);
  });
});
