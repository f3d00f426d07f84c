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
  return (await createKey(t, { permissions: [{ resource: 6, actions: ['Write'] }, { resource: 5, actions: ['Read', 'Write'] }] })).key;
}

export function post(t: TestApp, key: string, path: string, body: unknown) {
  return t.http().post(path).set('X-Api-Key', key).send(body as object);
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
  const response = await t.http().get(`/insight/tasks/${taskID}?attempts=true`).set('X-Api-Key', t.adminKey);
  expect(response.status).toBe(200);
  return response.body as Record<string, unknown> & { attempts: Record<string, unknown>[] };
}
