import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';
import { completeAs, expireLease, fleetTake } from './executor-support.js';
import { domainParams, GOOD_RESULT, registerSchema, viewTask } from './insight-support.js';

function register(t: TestApp, form: Record<string, unknown>) {
  return t.insight.post('/insight/tasks', form);
}

async function taskCount(t: TestApp): Promise<number> {
  const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM insight_task`);
  return rows[0].n as number;
}

describe('registration options: priority, maxAttempts, dedupe (extensions §16)', () => {
  let t: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    [t, second] = await createInstances(2, { TASK_LEASE_SECONDS: '60', TASK_MAX_DELIVERIES: '5' });
    await registerSchema(t);
  });
  afterAll(() => closeInstances([t, second]));

  it('serves higher priority first, oldest first within one', async () => {
    const ids: Record<string, string> = {};
    for (const [name, priority] of [
      ['low', 5],
      ['default', undefined],
      ['urgent', 1],
      ['default2', undefined],
    ] as const) {
      const response = await register(t, { params: domainParams(`${name}.example`), ...(priority !== undefined && { priority }) });
      expect(response.status).toBe(201);
      ids[name] = response.body.taskID;
    }
    const taken = await fleetTake(t, t.adminKey);
    expect(taken.map((item) => item.id)).toEqual([ids.urgent, ids.default, ids.default2, ids.low]);
    for (const item of taken) expect((await completeAs(t, t.adminKey, { taskID: item.id, leaseToken: item.leaseToken, result: GOOD_RESULT })).status).toBe(204);
  });

  it('fails a task after its own maxAttempts expired leases', async () => {
    const response = await register(t, { params: domainParams('once.example'), maxAttempts: 1 });
    const id = response.body.taskID as string;
    expect((await fleetTake(t, t.adminKey)).map((item) => item.id)).toEqual([id]);
    await expireLease(t, id);
    expect(await fleetTake(t, t.adminKey)).toEqual([]);
    expect((await viewTask(t, id)).error).toEqual(expect.objectContaining({ code: 'DeliveryLimitExceeded' }));
  });

  it('makes exactly one task of 50 concurrent identical registrations on two instances', async () => {
    const before = await taskCount(t);
    // The same keys in another order and spelling normalise to the same task.
    const forms = Array.from({ length: 50 }, (_, i) => ({
      params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: i % 2 ? 'Race.Example.' : 'race.example' }] },
      dedupe: 'inflight',
    }));
    const responses = await Promise.all(forms.map((form, i) => register(i % 2 ? second : t, form)));
    const ids = new Set(responses.map((response) => response.body.taskID));
    expect(ids.size).toBe(1);
    expect(responses.filter((response) => response.status === 201)).toHaveLength(1);
    expect(responses.filter((response) => response.status === 200).every((response) => response.body.deduplicated === true)).toBe(true);
    expect(await taskCount(t)).toBe(before + 1);
  });

  it('deduplicates by file content, not file id, and answers a recent result with dedupe result', async () => {
    const upload = async () => {
      const response = await t.filebox.put('/filebox/files').attach('file', Buffer.from('same bytes'), 'a.bin');
      expect(response.status).toBe(201);
      return response.body.fileID as string;
    };
    const [one, two] = [await upload(), await upload()];
    expect(one).not.toBe(two);
    const first = await register(t, { params: { schemaID: 'verdict', fileID: one }, dedupe: 'inflight' });
    const again = await register(second, { params: { schemaID: 'verdict', fileID: two }, dedupe: 'inflight' });
    expect([first.status, again.status, again.body]).toEqual([201, 200, { taskID: first.body.taskID, deduplicated: true }]);

    // Completed: inflight makes a new task; result answers the completed one while it is young enough.
    const item = (await fleetTake(t, t.adminKey)).find((taken) => taken.id === first.body.taskID)!;
    expect((await completeAs(t, t.adminKey, { taskID: item.id, leaseToken: item.leaseToken, result: GOOD_RESULT })).status).toBe(204);
    const cached = await register(t, { params: { schemaID: 'verdict', fileID: two }, dedupe: 'result', maxAgeSeconds: 3600 });
    expect([cached.status, cached.body]).toEqual([200, { taskID: first.body.taskID, deduplicated: true }]);
    await t.db.query(`UPDATE insight_task SET attempt_ended_at = now() - interval '2 hours' WHERE id = $1`, [first.body.taskID]);
    const stale = await register(t, { params: { schemaID: 'verdict', fileID: two }, dedupe: 'result', maxAgeSeconds: 3600 });
    expect(stale.status).toBe(201);
    expect(stale.body.taskID).not.toBe(first.body.taskID);
  });

  it('makes exactly one task of 50 concurrent registrations of one file content under five file ids on two instances', async () => {
    const fileIDs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await t.filebox.put('/filebox/files').attach('file', Buffer.from('racing bytes'), `race-${i}.bin`);
      expect(response.status).toBe(201);
      fileIDs.push(response.body.fileID as string);
    }
    const before = await taskCount(t);
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => register(i % 2 ? second : t, { params: { schemaID: 'verdict', fileID: fileIDs[i % 5] }, dedupe: 'result' })),
    );
    expect(new Set(responses.map((response) => response.body.taskID)).size).toBe(1);
    expect(responses.map((response) => response.status).sort()).toEqual([...Array(49).fill(200), 201]);
    expect(await taskCount(t)).toBe(before + 1);
  });

  it('refuses malformed options (400) and stores nothing', async () => {
    const before = await taskCount(t);
    for (const options of [
      { priority: 0 },
      { priority: 6 },
      { priority: 2.5 },
      { maxAttempts: 0 },
      { maxAttempts: 21 },
      { dedupe: 'always' },
      { dedupe: 'inflight', maxAgeSeconds: 60 },
      { dedupe: 'result', maxAgeSeconds: 0 },
      { dedupe: 'result', maxAgeSeconds: 31536001 },
    ]) {
      const response = await register(t, { params: domainParams('bad.example'), ...options });
      expect([response.status, response.body.code]).toEqual([400, 'InvalidData']);
    }
    expect(await taskCount(t)).toBe(before);
  });
});
