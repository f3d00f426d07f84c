import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { documentedBlock, executorKey, pythonExecutorFile, requirePython, runPythonExecutor, viewWithAttempts } from './executor-support.js';
import { domainParams, registerSchema, registerTask, viewTask } from './insight-support.js';

const run = promisify(execFile);

describe('docs/executors.md: the documented executor loops run', () => {
  let t: TestApp;
  let env: Record<string, string>;
  let python: string;

  beforeAll(async () => {
    t = await createTestApp();
    await registerSchema(t);
    env = { IDS_URL: t.url, IDS_KEY: await executorKey(t), SCHEMA: 'verdict' };
    python = await pythonExecutorFile();
  });
  afterAll(async () => {
    await t.close();
    if (python) await rm(dirname(python), { recursive: true, force: true });
  });

  /** The stored result and the one attempt of a task a documented executor completed. */
  async function expectCompletedByExecutor(id: string, domain: string) {
    expect((await viewTask(t, id)).result).toEqual({ type: 'DomainName', keys: [{ type: 'DomainName', value: domain }], context: { verdict: 'benign' } });
    expect((await viewWithAttempts(t, id)).attempts).toEqual([
      expect.objectContaining({ attempt: 1, executor: expect.stringMatching(/-\d+$/), outcome: 'completed' }),
    ]);
  }

  it('shell: takes a task of its schema with a token, completes it, and the result is stored', async () => {
    const id = await registerTask(t, domainParams('docs.example'));
    const { stdout } = await run('bash', ['-c', await documentedBlock('executor-loop', 'bash')], { env: { ...process.env, ...env, ONCE: '1' } });
    expect(stdout.trim()).toBe(`${id} completed-tasks 204`);
    await expectCompletedByExecutor(id, 'docs.example');
  });

  it('python: takes a task of its schema with a token, completes it, and the result is stored', async () => {
    await requirePython();
    const id = await registerTask(t, domainParams('python.example'));
    expect((await runPythonExecutor(python, env)).trim()).toBe(`${id} completed-tasks 204`);
    await expectCompletedByExecutor(id, 'python.example');
  });

  it('python: reports a transient, a rate-limited and a permanent failure with their kinds', async () => {
    await requirePython();
    const cases = [
      { raise: 'Transient("upstream timed out")', state: 'Pending', outcome: 'transient', error: { code: 'LookupFailed', message: 'upstream timed out' } },
      { raise: 'ValueError("no such domain")', state: 'Failed', outcome: 'permanent', error: { code: 'LookupFailed', message: 'no such domain' } },
      // Last: it pauses the whole schema.
      { raise: 'RateLimited(60)', state: 'Pending', outcome: 'rateLimited', error: { code: 'RateLimited', message: 'rate limited for 60 s' } },
    ];
    for (const [n, { raise, state, outcome, error }] of cases.entries()) {
      const id = await registerTask(t, domainParams(`failing-${n}.example`));
      const stdout = await runPythonExecutor(python, env, `def enrich(domain):\n    raise ${raise}\n`);
      expect(stdout.trim()).toBe(`${id} failed-tasks 204`);
      const view = await viewWithAttempts(t, id);
      expect([view.state, view.attempts[0].outcome, view.attempts[0].error]).toEqual([state, outcome, error]);
      // Out of the way of the next case's take.
      if (state === 'Pending') expect((await t.insight.post(`/insight/tasks/${id}/cancel`)).status).toBe(200);
    }
  });
});
