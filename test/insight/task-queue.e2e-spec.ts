import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { complete, domainParams, fail, GOOD_RESULT, registerSchema, registerTask, take, viewTask, type QueueItem } from './insight-support.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNKNOWN_TASK = '00000000-0000-4000-8000-000000000000';

describe('insight task queue', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await registerSchema(t);
    // No constraint on the context: shows what the service itself does to a result.
    await registerSchema(t, { schemaID: 'open', type: 'object' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('executing-tasks', () => {
    it('refuses a limit outside 1..1000 or not an integer with 400 InvalidData', async () => {
      for (const body of [{}, { limit: 0 }, { limit: -1 }, { limit: 1001 }, { limit: 1.5 }, { limit: '5' }, { limit: null }, { limit: 3, extra: true }]) {
        const response = await t.insight.post('/insight/task-queue/executing-tasks', body);
        expect({ body, status: response.status, code: response.body.code }).toEqual({ body, status: 400, code: 'InvalidData' });
      }
    });

    it('answers [] for an empty queue', async () => {
      const response = await t.insight.take(1000);
      expect(response.status).toBe(200);
      expect(response.body).toEqual([]);
      expect(response.headers.link).toBeUndefined();
    });

    it('leases up to limit tasks oldest first, and never hands a leased task out again while the lease runs', async () => {
      const ids: string[] = [];
      for (const domain of ['one.example', 'two.example', 'three.example']) ids.push(await registerTask(t, domainParams(domain)));

      const first = await take(t, 2);
      expect(first.map((item) => item.id)).toEqual(ids.slice(0, 2));
      expect(first[0]).toEqual({
        id: ids[0],
        createdAt: expect.stringMatching(TIMESTAMP),
        params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'one.example' }] },
      });
      expect(Object.keys(first[1]).sort()).toEqual(['createdAt', 'id', 'params']);
      expect(Date.parse(first[0].createdAt)).toBeLessThanOrEqual(Date.parse(first[1].createdAt));

      expect((await take(t, 5)).map((item) => item.id)).toEqual([ids[2]]);
      expect(await take(t, 5)).toEqual([]);
      // Still Pending while leased (decisions §9).
      expect((await viewTask(t, ids[0])).state).toBe('Pending');
      for (const id of ids) expect((await complete(t, id)).status).toBe(204);
    });

    it('requires Write on task-queue', async () => {
      const reader = await createKey(t, {
        permissions: [
          { resource: 6, actions: ['Read'] },
          { resource: 5, actions: ['Read', 'Write'] },
        ],
      });
      for (const [path, body] of [
        ['executing-tasks', { limit: 1 }],
        ['completed-tasks', { taskID: UNKNOWN_TASK, result: GOOD_RESULT }],
        ['failed-tasks', { taskID: UNKNOWN_TASK, error: { code: 'X', message: 'y' } }],
      ] as const) {
        const response = await t.insight.as(reader.key).post(`/insight/task-queue/${path}`, body);
        expect({ path, status: response.status, code: response.body.code }).toEqual({ path, status: 403, code: 'MissingPermissions' });
      }
      const executor = await createKey(t, { permissions: [{ resource: 6, actions: ['Write'] }] });
      const response = await t.insight.as(executor.key).take(1);
      expect(response.status).toBe(200);
    });
  });

  describe('state machine', () => {
    it('refuses reports for a task never taken (InvalidState) and keeps it Pending and takeable', async () => {
      const id = await registerTask(t);
      const completed = await complete(t, id);
      expectError(completed, 'InvalidState');
      const failed = await fail(t, id);
      expectError(failed, 'InvalidState');
      expect(await viewTask(t, id)).toEqual({ id, params: domainParams(), state: 'Pending' });
      expect((await take(t, 10)).map((item) => item.id)).toEqual([id]);
      expect((await complete(t, id)).status).toBe(204);
    });

    it('Pending (taken) → Completed is final: a second completion or a failure is InvalidState', async () => {
      const id = await registerTask(t);
      await take(t, 10);
      expect((await complete(t, id)).status).toBe(204);
      expect((await viewTask(t, id)).state).toBe('Completed');

      const again = await complete(t, id);
      expectError(again, 'InvalidState');
      const failed = await fail(t, id);
      expectError(failed, 'InvalidState');
      // Even an invalid result: the state is judged first.
      const invalid = await complete(t, id, { ...GOOD_RESULT, context: { verdict: 'unknown' } });
      expectError(invalid, 'InvalidState');

      expect(await viewTask(t, id)).toEqual({ id, params: domainParams(), state: 'Completed', result: GOOD_RESULT });
      expect(await take(t, 10)).toEqual([]);
    });

    it('Pending (taken) → Failed is final: a completion or a second failure is InvalidState', async () => {
      const id = await registerTask(t);
      await take(t, 10);
      expect((await fail(t, id, { code: 'Timeout', message: 'the sandbox timed out' })).status).toBe(204);

      const again = await fail(t, id, { code: 'Other', message: 'other' });
      expectError(again, 'InvalidState');
      const completed = await complete(t, id);
      expectError(completed, 'InvalidState');

      expect(await viewTask(t, id)).toEqual({
        id,
        params: domainParams(),
        state: 'Failed',
        error: { code: 'Timeout', message: 'the sandbox timed out' },
      });
      expect(await take(t, 10)).toEqual([]);
    });

    it('answers TaskNotFound for an unknown task and 400 InvalidData for a malformed report', async () => {
      const completed = await complete(t, UNKNOWN_TASK);
      expectError(completed, 'TaskNotFound');
      const failed = await fail(t, UNKNOWN_TASK);
      expectError(failed, 'TaskNotFound');

      const id = await registerTask(t);
      await take(t, 10);
      const malformed: [string, unknown][] = [
        ['completed-tasks', { taskID: 'not-a-uuid', result: GOOD_RESULT }],
        ['completed-tasks', { taskID: id }],
        ['completed-tasks', { taskID: id, result: null }],
        ['completed-tasks', { taskID: id, result: { ...GOOD_RESULT, type: 'Host' } }],
        ['completed-tasks', { taskID: id, result: { ...GOOD_RESULT, type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '10.0.0.0/8' }] } }],
        ['completed-tasks', { taskID: id, result: { type: 'IPAddress', keys: [{ type: 'IPNetwork', value: '10.0.0.0/8' }], context: {} } }],
        ['completed-tasks', { taskID: id, result: { ...GOOD_RESULT, keys: 'example.com' } }],
        ['completed-tasks', { taskID: id, result: { ...GOOD_RESULT, context: [] } }],
        ['completed-tasks', { taskID: id, result: { ...GOOD_RESULT, context: 'x' } }],
        ['completed-tasks', { taskID: id, result: GOOD_RESULT, extra: 1 }],
        ['completed-tasks', { taskID: 42, result: GOOD_RESULT }],
        ['failed-tasks', { taskID: 'not-a-uuid', error: { code: 'X', message: 'y' } }],
        ['failed-tasks', { taskID: id }],
        ['failed-tasks', { taskID: id, error: { code: '', message: 'y' } }],
        ['failed-tasks', { taskID: id, error: { code: 'X' } }],
        ['failed-tasks', { taskID: id, error: { code: 1, message: 'y' } }],
        ['failed-tasks', { taskID: id, error: 'X' }],
        // PostgreSQL text cannot hold U+0000: refused, not a 500.
        ['failed-tasks', { taskID: id, error: { code: 'X\u0000', message: 'y' } }],
        ['failed-tasks', { taskID: id, error: { code: 'X', message: 'y\u0000z' } }],
        ['failed-tasks', { taskID: id, error: { code: 'X'.repeat(257), message: 'y' } }],
        ['failed-tasks', { taskID: id, error: { code: 'X', message: 'y'.repeat(65537) } }],
      ];
      for (const [path, body] of malformed) {
        const response = await t.insight.post(`/insight/task-queue/${path}`, body as object);
        expect({ path, body, status: response.status, code: response.body.code }).toEqual({ path, body, status: 400, code: 'InvalidData' });
      }
      // A number JSON cannot carry as a double (it would be stored as null after passing the schema).
      const huge = await t.insight
        .post('/insight/task-queue/completed-tasks')
        .set('Content-Type', 'application/json')
        .send(
          `{"taskID": "${id}", "result": {"type": "DomainName", "keys": [{"type": "DomainName", "value": "example.com"}], "context": {"verdict": "benign", "score": 1e400}}}`,
        );
      expectError(huge, 'InvalidData');
      // Nothing above changed the task.
      expect(await viewTask(t, id)).toEqual({ id, params: domainParams(), state: 'Pending' });
      expect((await complete(t, id)).status).toBe(204);
    });

    it('never answers 500 to junk bodies', async () => {
      for (const path of ['executing-tasks', 'completed-tasks', 'failed-tasks']) {
        for (const raw of [
          '[]',
          '"x"',
          'null',
          '1',
          '{',
          '{"limit": {"$gt": 1}}',
          '{"taskID": ["a"], "result": {"keys": [null]}}',
          '{"taskID": {}, "error": []}',
        ]) {
          const response = await t.insight.post(`/insight/task-queue/${path}`).set('Content-Type', 'application/json').send(raw);
          expect({ path, raw, status: response.status, code: response.body.code }).toEqual({ path, raw, status: 400, code: 'InvalidData' });
        }
      }
    });
  });

  describe('result checks', () => {
    it('refuses a result that fails the schema with SchemaCheckFail details, leaving the task open', async () => {
      const id = await registerTask(t);
      await take(t, 10);
      const response = await complete(t, id, { ...GOOD_RESULT, context: { verdict: 'weird', score: 500 } });
      expect(response.status).toBe(422);
      expect(response.body.code).toBe('SchemaCheckFail');
      const details = response.body.details as Record<string, unknown> & { errors: Record<string, string>[] };
      expect(details).toEqual(
        expect.objectContaining({
          AbsoluteKeywordLocation: expect.stringMatching(/^verdict#\/properties\/context\/properties\/(verdict|score)\//),
          InstanceLocation: expect.stringMatching(/^\/context\/(verdict|score)$/),
          Message: expect.any(String),
        }),
      );
      expect(details.errors.map((error) => error.InstanceLocation).sort()).toEqual(['/context/score', '/context/verdict']);
      for (const error of details.errors) expect(Object.keys(error).sort()).toEqual(['AbsoluteKeywordLocation', 'InstanceLocation', 'Message']);

      expect(await viewTask(t, id)).toEqual({ id, params: domainParams(), state: 'Pending' });
      expect((await complete(t, id)).status).toBe(204);
    });

    it('lists at most 1000 violations, with errorCount telling how many there were', async () => {
      await registerSchema(t, { schemaID: 'string-items', properties: { context: { properties: { list: { items: { type: 'string' } } } } } });
      const id = await registerTask(t, { schemaID: 'string-items', objectKeys: [{ type: 'DomainName', value: 'many.example' }] });
      await take(t, 10);
      const list = Array.from({ length: 5000 }, (_, i) => i);
      const response = await complete(t, id, { type: 'DomainName', keys: [{ type: 'DomainName', value: 'many.example' }], context: { list } });
      expectError(response, 'SchemaCheckFail');
      expect(response.body.details.errors).toHaveLength(1000);
      expect(response.body.details.errorCount).toBe(5000);
      expect(response.body.details.InstanceLocation).toBe('/context/list/0');
      expect((await complete(t, id, { type: 'DomainName', keys: [{ type: 'DomainName', value: 'many.example' }], context: {} })).status).toBe(204);
    });

    it('refuses context attributes the pipe would delete (400 InvalidData), and keeps every other name', async () => {
      const id = await registerTask(t, { schemaID: 'open', objectKeys: [{ type: 'DomainName', value: 'names.example' }] });
      await take(t, 10);
      const send = (context: string) =>
        t.insight
          .post('/insight/task-queue/completed-tasks')
          .set('Content-Type', 'application/json')
          .send(`{"taskID": "${id}", "result": {"type": "DomainName", "keys": [{"type": "DomainName", "value": "names.example"}], "context": ${context}}}`);
      for (const [context, pointer] of [
        ['{"constructor": 1}', '/result/context/constructor'],
        ['{"a": [{"prototype": 2}]}', '/result/context/a/0/prototype'],
        ['{"__proto__": {"x": 1}}', '/result/context/__proto__'],
      ]) {
        const response = await send(context);
        expect([response.status, response.body.code, response.body.details?.InstanceLocation]).toEqual([400, 'InvalidData', pointer]);
      }
      expect((await viewTask(t, id)).state).toBe('Pending');
      const kept = { toString: 1, valueOf: { hasOwnProperty: true }, names: ['constructor', '__proto__'] };
      expect((await send(JSON.stringify(kept))).status).toBe(204);
      expect(((await viewTask(t, id)).result as { context: unknown }).context).toEqual(kept);
    });

    it('checks result keys: InvalidKeyFormat, InvalidKeySet', async () => {
      const id = await registerTask(t);
      await take(t, 10);
      const cases: [unknown, string][] = [
        [{ type: 'DomainName', keys: [{ type: 'DomainName', value: 'not a domain' }], context: { verdict: 'benign' } }, 'InvalidKeyFormat'],
        [{ type: 'File', keys: [{ type: 'SHA1Hash', value: 'xyz' }], context: { verdict: 'benign' } }, 'InvalidKeyFormat'],
        [{ type: 'DomainName', keys: [{ type: 'URL', value: 'http://example.com/' }], context: { verdict: 'benign' } }, 'InvalidKeySet'],
        [{ type: 'DomainName', keys: [], context: { verdict: 'benign' } }, 'InvalidKeySet'],
        [{ type: 'File', keys: [{ type: 'DomainName', value: 'example.com' }], context: { verdict: 'benign' } }, 'InvalidKeySet'],
      ];
      for (const [result, code] of cases) {
        const response = await complete(t, id, result);
        expect({ result, status: response.status, code: response.body.code }).toEqual({ result, status: 422, code });
      }
      expect((await viewTask(t, id)).state).toBe('Pending');
      expect((await complete(t, id)).status).toBe(204);
    });

    it('stores the normalised result, with context defaulting to {}', async () => {
      const id = await registerTask(t, { schemaID: 'open', objectKeys: [{ type: 'IPAddress', value: '2001:DB8:0:0:0:0:0:1' }] });
      await take(t, 10);
      const response = await complete(t, id, {
        type: 'File',
        keys: [
          { type: 'SHA1Hash', value: 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709' },
          { type: 'SHA1Hash', value: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' },
        ],
      });
      expect(response.status).toBe(204);
      expect(await viewTask(t, id)).toEqual({
        id,
        params: { schemaID: 'open', objectKeys: [{ type: 'IPAddress', value: '2001:db8::1' }] },
        state: 'Completed',
        result: { type: 'File', keys: [{ type: 'SHA1Hash', value: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' }], context: {} },
      });
    });
  });

  describe('concurrent reports of one task', () => {
    it('two executors completing the same task at once: exactly one 204, the other 422 InvalidState', async () => {
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => registerTask(t, domainParams(`twice-${i}.example`))));
      expect((await take(t, 1000)).map((item) => item.id).sort()).toEqual([...ids].sort());
      for (const id of ids) {
        const result = { ...GOOD_RESULT, keys: ((await viewTask(t, id)).params as { objectKeys: unknown }).objectKeys };
        const [a, b] = await Promise.all([complete(t, id, result), complete(t, id, { ...result, context: { verdict: 'benign' } })]);
        expect([a.status, b.status].sort()).toEqual([204, 422]);
        const loser = a.status === 204 ? b : a;
        expect(loser.body.code).toBe('InvalidState');
        const view = await viewTask(t, id);
        expect(view.state).toBe('Completed');
        expect(view.result).toEqual(a.status === 204 ? result : { ...result, context: { verdict: 'benign' } });
      }
    });

    it('a completion racing a failure: exactly one wins and the view shows the winner', async () => {
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => registerTask(t, domainParams(`race-${i}.example`))));
      await take(t, 1000);
      for (const id of ids) {
        const result = { ...GOOD_RESULT, keys: ((await viewTask(t, id)).params as { objectKeys: unknown }).objectKeys };
        const [completed, failed] = await Promise.all([complete(t, id, result), fail(t, id, { code: 'Crashed', message: 'x' })]);
        expect([completed.status, failed.status].sort()).toEqual([204, 422]);
        expect((completed.status === 204 ? failed : completed).body.code).toBe('InvalidState');
        const view = await viewTask(t, id);
        if (completed.status === 204) expect(view).toEqual({ id, params: view.params, state: 'Completed', result });
        else expect(view).toEqual({ id, params: view.params, state: 'Failed', error: { code: 'Crashed', message: 'x' } });
      }
    });
  });

  it("a PUT of the task's schema applies to the next completion", async () => {
    await registerSchema(t, { schemaID: 'evolving', type: 'object' });
    const [first, second] = [
      await registerTask(t, { schemaID: 'evolving', objectKeys: [{ type: 'DomainName', value: 'e1.example' }] }),
      await registerTask(t, { schemaID: 'evolving', objectKeys: [{ type: 'DomainName', value: 'e2.example' }] }),
    ];
    await take(t, 1000);
    const resultOf = (domain: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value: domain }], context: {} });
    // The open schema (compiled and cached by now) accepts an empty context.
    expect((await complete(t, first, resultOf('e1.example'))).status).toBe(204);

    const stricter = { schemaID: 'evolving', type: 'object', properties: { context: { required: ['verdict'] } } };
    const put = await t.insight.replaceSchema('evolving', stricter, '"1"');
    expect(put.status).toBe(204);
    const refused = await complete(t, second, resultOf('e2.example'));
    expect([refused.status, refused.body.code, refused.body.details?.AbsoluteKeywordLocation]).toEqual([
      422,
      'SchemaCheckFail',
      'evolving#/properties/context/required',
    ]);
    expect((await complete(t, second, { ...resultOf('e2.example'), context: { verdict: 'x' } })).status).toBe(204);
  });

  it('six concurrent executors drain 120 tasks: each task delivered once, none lost', async () => {
    const registered = new Set<string>();
    for (let batch = 0; batch < 12; batch++) {
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => registerTask(t, domainParams(`c${batch}-${i}.example`))));
      ids.forEach((id) => registered.add(id));
    }
    const headers = { 'X-Api-Key': t.adminKey, 'Content-Type': 'application/json' };
    const delivered: string[] = [];
    const executor = async () => {
      for (;;) {
        const response = await fetch(`${t.url}/insight/task-queue/executing-tasks`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ limit: 7 }),
        });
        expect(response.status).toBe(200);
        const items = (await response.json()) as QueueItem[];
        if (items.length === 0) return;
        for (const item of items) {
          delivered.push(item.id);
          const done = await fetch(`${t.url}/insight/task-queue/completed-tasks`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ taskID: item.id, result: { ...GOOD_RESULT, keys: item.params.objectKeys } }),
          });
          expect(done.status).toBe(204);
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, executor));

    expect(delivered).toHaveLength(120);
    expect(new Set(delivered)).toEqual(registered);
    for (const id of registered) expect((await viewTask(t, id)).state).toBe('Completed');
    expect(await take(t, 1000)).toEqual([]);
  });
});
