import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expireLease, fleetTake } from './executor-support.js';
import { domainParams, registerSchema } from './insight-support.js';

/** The service's delivery limit here; the tasks below have their own or none. */
const SERVICE_LIMIT = 2;

const limitMessage = (attempts: number) => `no executor reported a result within the lease on any of ${attempts} deliveries`;

describe('DeliveryLimitExceeded names the attempt limit of its task (issue 44)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ TASK_LEASE_SECONDS: '60', TASK_MAX_DELIVERIES: String(SERVICE_LIMIT) });
    await registerSchema(t);
  });
  afterAll(() => t?.close());

  async function register(form: Record<string, unknown>): Promise<string> {
    const response = await t.insight.post('/insight/tasks', form);
    expect(response.status).toBe(201);
    return response.body.taskID as string;
  }

  /** Takes the one task that is takeable (the tasks here are taken one at a time) and lets its lease run out. */
  async function deliverAndExpire(id: string): Promise<void> {
    expect((await fleetTake(t, t.adminKey)).map((item) => item.id)).toEqual([id]);
    await expireLease(t, id);
  }

  async function errorOf(id: string) {
    const response = await t.insight.task(id);
    expect(response.status).toBe(200);
    expect(response.body.state).toBe('Failed');
    return response.body.error as { code: string; message: string };
  }

  it("names the task's own maxAttempts, before and after a take records the failure, in the view and the listing", async () => {
    const id = await register({ params: domainParams('own-limit.example'), maxAttempts: 1 });
    await deliverAndExpire(id);

    // The view judges the task Failed before any take has recorded it.
    expect(await errorOf(id)).toEqual({ code: 'DeliveryLimitExceeded', message: limitMessage(1) });

    // The next take records it, with the same error.
    expect(await fleetTake(t, t.adminKey)).toEqual([]);
    expect(await errorOf(id)).toEqual({ code: 'DeliveryLimitExceeded', message: limitMessage(1) });
    const listed = await t.insight.tasks('?errorCode=DeliveryLimitExceeded');
    expect(listed.status).toBe(200);
    expect((listed.body as { id: string; error: unknown }[]).find((task) => task.id === id)?.error).toEqual({
      code: 'DeliveryLimitExceeded',
      message: limitMessage(1),
    });
  });

  it("names the service's TASK_MAX_DELIVERIES for a task without maxAttempts", async () => {
    const id = await register({ params: domainParams('service-limit.example') });
    for (let delivery = 0; delivery < SERVICE_LIMIT; delivery++) await deliverAndExpire(id);
    expect(await errorOf(id)).toEqual({ code: 'DeliveryLimitExceeded', message: limitMessage(SERVICE_LIMIT) });
    expect(await fleetTake(t, t.adminKey)).toEqual([]);
    expect(await errorOf(id)).toEqual({ code: 'DeliveryLimitExceeded', message: limitMessage(SERVICE_LIMIT) });
  });

  it('names a limit above the service default too', async () => {
    const id = await register({ params: domainParams('higher-limit.example'), maxAttempts: SERVICE_LIMIT + 1 });
    for (let delivery = 0; delivery < SERVICE_LIMIT + 1; delivery++) await deliverAndExpire(id);
    expect(await errorOf(id)).toEqual({ code: 'DeliveryLimitExceeded', message: limitMessage(SERVICE_LIMIT + 1) });
    expect(await fleetTake(t, t.adminKey)).toEqual([]);
    expect(await errorOf(id)).toEqual({ code: 'DeliveryLimitExceeded', message: limitMessage(SERVICE_LIMIT + 1) });
  });
});
