import type { Test } from 'supertest';
import { SchemaRegistryClient } from './api-client.js';

export { expectError } from './api-client.js';

/** `/insight`: result schemas, tasks and the task queue. */
export class InsightClient extends SchemaRegistryClient {
  protected readonly area = 'insight';

  registerTask(params: Record<string, unknown>): Test {
    return this.post('/insight/tasks', { params });
  }

  task(taskID: string): Test {
    return this.get(`/insight/tasks/${taskID}`);
  }

  tasks(query = ''): Test {
    return this.get(`/insight/tasks${query}`);
  }

  take(limit: number): Test {
    return this.post('/insight/task-queue/executing-tasks', { limit });
  }

  complete(body: unknown): Test {
    return this.post('/insight/task-queue/completed-tasks', body);
  }

  fail(body: unknown): Test {
    return this.post('/insight/task-queue/failed-tasks', body);
  }
}
