import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from '@jest/globals';
import { createKey } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';

/** A fleet executor's queue item: the product's three fields plus the attempt's. */
export interface FleetItem {
  id: string;
  createdAt: string;
  params: Record<string, unknown>;
  attempt: number;
  leaseToken: string;
  leaseExpiresAt: string;
}

/** A key that may take and report tasks (`task-queue` is resource 6) and read them (`tasks`, 5). */
export async function executorKey(t: TestApp): Promise<string> {
  return (
    await createKey(t, {
      permissions: [
        { resource: 6, actions: ['Write'] },
        { resource: 5, actions: ['Read', 'Write'] },
      ],
    })
  ).key;
}

export function post(t: TestApp, key: string, path: string, body: unknown) {
  return t.insight.as(key).post(path, body as object);
}

/** A take naming an executor (so items carry the attempt's token), as `key`. */
export async function fleetTake(t: TestApp, key: string, body: Record<string, unknown> = {}): Promise<FleetItem[]> {
  const response = await post(t, key, '/insight/task-queue/executing-tasks', { limit: 10, executor: 'worker', ...body });
  expect(response.status).toBe(200);
  return response.body as FleetItem[];
}

export const completeAs = (t: TestApp, key: string, body: Record<string, unknown>) => post(t, key, '/insight/task-queue/completed-tasks', body);
export const failAs = (t: TestApp, key: string, body: Record<string, unknown>) => post(t, key, '/insight/task-queue/failed-tasks', body);
export const heartbeatAs = (t: TestApp, key: string, body: Record<string, unknown>) => post(t, key, '/insight/task-queue/heartbeats', body);

/** The clock we control: the task's lease ran out `secondsAgo` ago (the database clock decides leases). */
export async function expireLease(t: TestApp, taskID: string, secondsAgo = 1): Promise<void> {
  await t.db.query(`UPDATE insight_task SET lease_expires_at = now() - make_interval(secs => $2) WHERE id = $1`, [taskID, secondsAgo]);
}

/** The row version: changes exactly when the task's row is written. */
export async function rowVersion(t: TestApp, taskID: string): Promise<string> {
  const { rows } = await t.db.query<{ xmin: string }>(`SELECT xmin::text FROM insight_task WHERE id = $1`, [taskID]);
  return rows[0].xmin;
}

export async function viewWithAttempts(t: TestApp, taskID: string) {
  const response = await t.insight.get(`/insight/tasks/${taskID}?attempts=true`);
  expect(response.status).toBe(200);
  return response.body as Record<string, unknown> & { attempts: Record<string, unknown>[] };
}

/** A fenced code block of docs/executors.md (`<!-- marker -->` then ```language), as the reader copies it. */
export async function documentedBlock(marker: string, language: string): Promise<string> {
  const text = await readFile('docs/executors.md', 'utf8');
  const block = new RegExp(`<!-- ${marker} -->\\n\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (!block) throw new Error(`docs/executors.md has no ${marker} block`);
  return block[1];
}

/**
 * Runs the documented Python executor's `main()` after `overrides` (Python run in its namespace, e.g. a
 * different `enrich`): the script is executed as a module, so the overrides replace its functions.
 */
const PYTHON_RUNNER = `
import sys
ns = {"__name__": "executor"}
exec(compile(open(sys.argv[1]).read(), "executor.py", "exec"), ns)
exec(sys.argv[2], ns)
ns["main"]()
`;

/** python3 on PATH, or a failure that says so: the documented Python loop is never skipped silently. */
export async function requirePython(): Promise<void> {
  try {
    await promisify(execFile)('python3', ['--version']);
  } catch (error) {
    throw new Error(`python3 is needed to test the Python executor of docs/executors.md and is not on PATH (${(error as Error).message})`);
  }
}

/** The documented Python executor, written to a file for `python3`. */
export async function pythonExecutorFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ids-executor-'));
  const file = join(dir, 'executor.py');
  await writeFile(file, await documentedBlock('executor-loop-python', 'python'));
  return file;
}

/** Starts the documented Python executor (with `overrides`) as a child process with this environment. */
export function spawnPythonExecutor(file: string, env: Record<string, string>, overrides = ''): ChildProcess {
  return spawn('python3', ['-c', PYTHON_RUNNER, file, overrides], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs the documented Python executor to its end (ONCE=1) and returns what it printed. */
export async function runPythonExecutor(file: string, env: Record<string, string>, overrides = ''): Promise<string> {
  const { stdout } = await promisify(execFile)('python3', ['-c', PYTHON_RUNNER, file, overrides], {
    env: { ...process.env, ONCE: '1', ...env },
    timeout: 120_000,
  });
  return stdout;
}
