import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { completeAs, executorKey, expireLease, fleetTake, heartbeatAs, rowVersion } from './executor-support.js';
import { domainParams, GOOD_RESULT, registerSchema, registerTask, viewTask } from './insight-support.js';

const LEASE = 60;

/** The clock we control: the lease has `seconds` left. */
async function leaseLeft(t: TestApp, taskID: string, seconds: number): Promise<void> {
  await t.db.query(`UPDATE insight_task SET lease_expires_at = now() + make_interval(secs => $2) WHERE id = $1`, [taskID, seconds]);
}

describe('heartbeats (extensions §16)', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({ TASK_LEASE_SECONDS: String(LEASE), TASK_MAX_DELIVERIES: '3', TASK_MAX_LEASE_SECONDS: '600' });
    await registerSchema(t);
    key = await executorKey(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('holds a task for many leases, writing its row only once less than half the lease is left', async () => {
    const id = await registerTask(t);
    const [item] = await fleetTake(t, key);
    const beat = { taskID: id, leaseToken: item.leaseToken };

    // More than half the lease left: answered from a read, the row is not written.
    const version = await rowVersion(t, id);
    for (let i = 0; i < 5; i++) {
      const response = await heartbeatAs(t, key, beat);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ leaseExpiresAt: item.leaseExpiresAt, cancelRequested: false });
    }
    expect(await rowVersion(t, id)).toBe(version);

    // Five leases' worth of time, each time with less than half left: one write per heartbeat, the task stays leased.
    let written = version;
    for (let lease = 0; lease < 5; lease++) {
      await leaseLeft(t, id, LEASE / 3);
      written = await rowVersion(t, id);
      const response = await heartbeatAs(t, key, beat);
      expect(response.status).toBe(200);
      expect(Date.parse(response.body.leaseExpiresAt)).toBeGreaterThan(Date.now() + (LEASE / 2) * 1000);
      expect(await rowVersion(t, id)).not.toBe(written);
      expect(await fleetTake(t, key)).toEqual([]);
    }
    expect((await completeAs(t, key, { ...beat, result: GOOD_RESULT })).status).toBe(204);
    const done = await heartbeatAs(t, key, beat);
    expect([done.status, done.body.code]).toEqual([422, 'InvalidState']);
  });

  it('keeps the row-update budget across many leased tasks heartbeating every third of their lease', async () => {
    const TASKS = 40;
    const LEASES = 3;
    for (let i = 0; i < TASKS; i++) await registerTask(t, domainParams(`budget-${i}.example`));
    const held = await fleetTake(t, key, { limit: TASKS });
    expect(held).toHaveLength(TASKS);
    const ids = held.map((item) => item.id);
    const versions = async () => {
      const { rows } = await t.db.query<{ id: string; xmin: string }>(`SELECT id, xmin::text FROM insight_task WHERE id = ANY ($1) ORDER BY id`, [ids]);
      return rows.map((row) => row.xmin);
    };
    let writes = 0;
    for (let tick = 0; tick < 3 * LEASES; tick++) {
      // The clock we control: a third of the lease passes for every task.
      await t.db.query(
        `UPDATE insight_task SET lease_expires_at = lease_expires_at - make_interval(secs => $2), attempt_taken_at = attempt_taken_at - make_interval(secs => $2)
          WHERE id = ANY ($1)`,
        [ids, LEASE / 3],
      );
      const before = await versions();
      const beats = await Promise.all(held.map((item) => heartbeatAs(t, key, { taskID: item.id, leaseToken: item.leaseToken })));
      expect(beats.map((response) => response.status)).toEqual(held.map(() => 200));
      const after = await versions();
      writes += after.filter((version, i) => version !== before[i]).length;
    }
    // A write every other heartbeat (when a third of the lease is left): at most one per half lease, never more.
    expect(writes).toBe(TASKS * ((3 * LEASES) >> 1));
    expect(writes).toBeLessThanOrEqual(TASKS * 2 * LEASES);
    expect(await fleetTake(t, key)).toEqual([]);
    for (const item of held) expect((await completeAs(t, key, { taskID: item.id, leaseToken: item.leaseToken, result: GOOD_RESULT })).status).toBe(204);
  });

  it('writes progress on every heartbeat that carries it and shows it in the view', async () => {
    const id = await registerTask(t, domainParams('progress.example'));
    const [item] = await fleetTake(t, key);
    const version = await rowVersion(t, id);
    const response = await heartbeatAs(t, key, { taskID: id, leaseToken: item.leaseToken, progress: { percent: 40, message: 'unpacking' } });
    expect(response.status).toBe(200);
    expect(await rowVersion(t, id)).not.toBe(version);
    expect(await viewTask(t, id)).toEqual({ id, params: domainParams('progress.example'), state: 'Pending', progress: { percent: 40, message: 'unpacking' } });
  });

  it("caps the lease at the take + TASK_MAX_LEASE_SECONDS and revives the current token's lease when nobody took the task", async () => {
    const id = await registerTask(t, domainParams('cap.example'));
    const [item] = await fleetTake(t, key);
    await t.db.query(
      `UPDATE insight_task SET attempt_taken_at = now() - interval '590 seconds', lease_expires_at = now() + interval '1 second' WHERE id = $1`,
      [id],
    );
    const capped = await heartbeatAs(t, key, { taskID: id, leaseToken: item.leaseToken, extendSeconds: 3600 });
    expect(capped.status).toBe(200);
    const { rows } = await t.db.query(`SELECT attempt_taken_at + interval '600 seconds' AS cap FROM insight_task WHERE id = $1`, [id]);
    expect(Date.parse(capped.body.leaseExpiresAt)).toBe((rows[0].cap as Date).getTime());

    const revived = await registerTask(t, domainParams('revive.example'));
    const [taken] = await fleetTake(t, key);
    await expireLease(t, revived, 5);
    const response = await heartbeatAs(t, key, { taskID: revived, leaseToken: taken.leaseToken, extendSeconds: 30 });
    expect(response.status).toBe(200);
    expect(Date.parse(response.body.leaseExpiresAt)).toBeGreaterThan(Date.now());
    expect(await fleetTake(t, key)).toEqual([]);
  });

  it('refuses an earlier attempt (LeaseLost), an unknown task (TaskNotFound) and malformed heartbeats (400), changing nothing', async () => {
    const id = await registerTask(t, domainParams('refused.example'));
    const [first] = await fleetTake(t, key);
    await expireLease(t, id);
    const [second] = await fleetTake(t, key);
    const version = await rowVersion(t, id);
    const lost = await heartbeatAs(t, key, { taskID: id, leaseToken: first.leaseToken, progress: { percent: 1 } });
    expect([lost.status, lost.body.code]).toEqual([409, 'LeaseLost']);
    const unknown = await heartbeatAs(t, key, { taskID: '00000000-0000-4000-8000-000000000000', leaseToken: second.leaseToken });
    expect([unknown.status, unknown.body.code]).toEqual([422, 'TaskNotFound']);
    for (const body of [
      { taskID: id },
      { taskID: id, leaseToken: 'nope' },
      { taskID: id, leaseToken: second.leaseToken, extendSeconds: 0 },
      { taskID: id, leaseToken: second.leaseToken, extendSeconds: 3601 },
      { taskID: id, leaseToken: second.leaseToken, extendSeconds: 1.5 },
      { taskID: id, leaseToken: second.leaseToken, progress: { percent: 101 } },
      { taskID: id, leaseToken: second.leaseToken, progress: { percent: 5, message: 'x'.repeat(1025) } },
      { taskID: id, leaseToken: second.leaseToken, progress: { message: 'no percent' } },
    ]) {
      const response = await heartbeatAs(t, key, body);
      expect([response.status, response.body.code]).toEqual([400, 'InvalidData']);
    }
    expect(await rowVersion(t, id)).toBe(version);
  });
});
