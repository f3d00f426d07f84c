import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { domainParams, registerSchema, registerTask, viewTask } from './insight-support.js';
import { executorKey, viewWithAttempts } from './executor-support.js';

const run = promisify(execFile);

/** The shell executor of docs/executors.md, as the reader copies it. */
async function documentedLoop(): Promise<string> {
  const text = await readFile('docs/executors.md', 'utf8');
  const block = /<!-- executor-loop -->\n```bash\n([\s\S]*?)```/.exec(text);
  if (!block) throw new Error('docs/executors.md has no executor-loop block');
  return block[1];
}

describe('docs/executors.md: the shell executor loop runs', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await registerSchema(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('takes a task of its schema with a token, completes it, and the result is stored', async () => {
    const id = await registerTask(t, domainParams('docs.example'));
    const { stdout } = await run('bash', ['-c', await documentedLoop()], {
      env: { ...process.env, IDS_URL: t.url, IDS_KEY: await executorKey(t), SCHEMA: 'verdict', ONCE: '1' },
    });
    expect(stdout.trim()).toBe(`${id} completed-tasks 204`);
    expect((await viewTask(t, id)).result).toEqual({ type: 'DomainName', keys: [{ type: 'DomainName', value: 'docs.example' }], context: { verdict: 'benign' } });
    expect((await viewWithAttempts(t, id)).attempts).toEqual([expect.objectContaining({ attempt: 1, executor: expect.stringMatching(/-\d+$/), outcome: 'completed' })]);
  });
});
