import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../support/eventually.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  completeAs,
  executorKey,
  failAs,
  heartbeatAs,
  pythonExecutorFile,
  requirePython,
  runPythonExecutor,
  spawnPythonExecutor,
  viewWithAttempts,
  type FleetItem,
} from './executor-support.js';
import { GOOD_RESULT, registerSchema, registerTask, viewTask } from './insight-support.js';

const LEASE = 3;

/**
 * The documented Python executor whose look-up hangs (a sandbox that never returns), printing each take's
 * answer (its lease tokens) so the test can send the late report a dead executor's retry would send.
 */
const HANGING = `
import time
_api = api
def api(path, body):
    answer = _api(path, body)
    if path.endswith("/executing-tasks"):
        print("TAKEN", json.dumps(answer[1]), flush=True)
    return answer
def enrich(domain):
    time.sleep(3600)
`;

/** The first take the child printed. */
async function firstTake(child: ChildProcess): Promise<FleetItem[]> {
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('TAKEN ')) return JSON.parse(line.slice('TAKEN '.length)) as FleetItem[];
  }
  throw new Error('the executor ended without taking a task');
}

describe('executors killed mid-task (kill -9 of the executor process)', () => {
  let t: TestApp;
  let python: string;
  let dead: string;
  let survivor: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await createTestApp({ TASK_LEASE_SECONDS: String(LEASE), TASK_MAX_DELIVERIES: '3' });
    await registerSchema(t);
    [dead, survivor] = [await executorKey(t), await executorKey(t)];
    await requirePython();
    python = await pythonExecutorFile();
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await t.close();
    if (python) await rm(dirname(python), { recursive: true, force: true });
  });

  it('ends the lease, another executor finishes the task as attempt 2, and the dead one is fenced', async () => {
    const id = await registerTask(t);
    const env = { IDS_URL: t.url, SCHEMA: 'verdict', LEASE_SECONDS: String(LEASE) };
    const child = spawnPythonExecutor(python, { ...env, IDS_KEY: dead }, HANGING);
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [taken] = await firstTake(child);
    expect([taken.id, taken.attempt]).toEqual([id, 1]);

    // Alive, it holds the task past its first lease by heartbeats.
    await eventually(async () => {
      const { rows } = await t.db.query(`SELECT lease_expires_at > attempt_taken_at + make_interval(secs => $2) AS extended FROM insight_task WHERE id = $1`, [
        id,
        LEASE,
      ]);
      expect(rows[0].extended).toBe(true);
    });

    child.kill('SIGKILL');
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    expect([code, signal, stderr]).toEqual([null, 'SIGKILL', '']);

    // Another executor's take waits for the dead one's lease to end, then gets the task as its second attempt.
    const stdout = await runPythonExecutor(python, { ...env, IDS_KEY: survivor });
    expect(stdout.trim()).toBe(`${id} completed-tasks 204`);

    // The dead executor's late reports (with its token, or without one) change nothing.
    const late = { taskID: id, leaseToken: taken.leaseToken };
    const otherResult = { ...GOOD_RESULT, context: { verdict: 'malicious' } };
    for (const response of [
      await completeAs(t, dead, { ...late, result: otherResult }),
      await failAs(t, dead, { ...late, error: { code: 'Crashed', message: 'late', kind: 'transient' } }),
      await heartbeatAs(t, dead, late),
    ]) {
      expect([response.status, response.body.code]).toEqual([409, 'LeaseLost']);
    }
    const tokenless = await completeAs(t, dead, { taskID: id, result: otherResult });
    expect([tokenless.status, tokenless.body.code]).toEqual([422, 'InvalidState']);

    expect((await viewTask(t, id)).result).toEqual({ ...GOOD_RESULT, context: { verdict: 'benign' } });
    const { attempts } = await viewWithAttempts(t, id);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([
      [1, 'leaseExpired'],
      [2, 'completed'],
    ]);
    expect(attempts[0].executor).toMatch(new RegExp(`-${child.pid}$`));
    expect(attempts[1].executor).not.toBe(attempts[0].executor);
  });
});
