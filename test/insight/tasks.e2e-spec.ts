import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { complete, domainParams, fail, registerSchema, registerTask, take, viewTask } from './insight-support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MD5 = '627FCDB6CC9A5E16D657CA6CDEF0A6BB';
const SHA256 = 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855';

describe('insight tasks', () => {
  let t: TestApp;
  const post = (body: unknown) => t.insight.post('/insight/tasks', body as object);

  beforeAll(async () => {
    t = await createTestApp();
    await registerSchema(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses every malformed or unacceptable form with its code and registers nothing', async () => {
    const cases: [unknown, number, string][] = [
      [{}, 400, 'InvalidData'],
      [{ params: null }, 400, 'InvalidData'],
      [{ params: 'verdict' }, 400, 'InvalidData'],
      [{ params: { objectKeys: [{ type: 'DomainName', value: 'a.com' }] } }, 400, 'InvalidData'],
      [{ params: { schemaID: 7, objectKeys: [{ type: 'DomainName', value: 'a.com' }] } }, 400, 'InvalidData'],
      // A malformed schemaID cannot name a schema; U+0000 in it once reached SQL (500).
      [{ params: { schemaID: 'a\u0000b', objectKeys: [{ type: 'DomainName', value: 'a.com' }] } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'bad id', objectKeys: [{ type: 'DomainName', value: 'a.com' }] } }, 400, 'InvalidData'],
      [{ params: { schemaID: '', objectKeys: [{ type: 'DomainName', value: 'a.com' }] } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'v'.repeat(129), objectKeys: [{ type: 'DomainName', value: 'a.com' }] } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'verdict' } }, 400, 'InvalidData'],
      [{ params: { ...domainParams(), extra: 1 } }, 400, 'InvalidData'],
      [{ params: domainParams(), extra: 1 }, 400, 'InvalidData'],
      [{ params: { schemaID: 'verdict', objectKeys: 'example.com' } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'verdict', objectKeys: [{ type: 'Domain', value: 'a.com' }] } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName' }] } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'verdict', objectKeys: [null] } }, 400, 'InvalidData'],
      // Insight has no IPNetwork (wire-contract §6): not one of its enum values.
      [{ params: { schemaID: 'verdict', objectKeys: [{ type: 'IPNetwork', value: '10.0.0.0/8' }] } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'verdict', fileID: 'not-a-uuid' } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'verdict', fileID: 12 } }, 400, 'InvalidData'],
      [{ params: { schemaID: 'verdict', objectKeys: [] } }, 422, 'InvalidKeySet'],
      [{ params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'bad domain!' }] } }, 422, 'InvalidKeyFormat'],
      [{ params: { schemaID: 'verdict', objectKeys: [{ type: 'MD5Hash', value: 'abc' }] } }, 422, 'InvalidKeyFormat'],
      [{ params: { schemaID: 'verdict', objectKeys: [{ type: 'IPAddress', value: '999.1.1.1' }] } }, 422, 'InvalidKeyFormat'],
      [
        {
          params: {
            schemaID: 'verdict',
            objectKeys: [
              { type: 'DomainName', value: 'a.com' },
              { type: 'DomainName', value: 'b.com' },
            ],
          },
        },
        422,
        'InvalidKeySet',
      ],
      [
        {
          params: {
            schemaID: 'verdict',
            objectKeys: [
              { type: 'DomainName', value: 'a.com' },
              { type: 'URL', value: 'http://a.com/' },
            ],
          },
        },
        422,
        'InvalidKeySet',
      ],
      [
        {
          params: {
            schemaID: 'verdict',
            objectKeys: [
              { type: 'MD5Hash', value: MD5 },
              { type: 'DomainName', value: 'a.com' },
            ],
          },
        },
        422,
        'InvalidKeySet',
      ],
      [
        {
          params: {
            schemaID: 'verdict',
            objectKeys: [
              { type: 'MD5Hash', value: MD5 },
              { type: 'MD5Hash', value: MD5.replace('6', '7') },
            ],
          },
        },
        422,
        'InvalidKeySet',
      ],
      [{ params: { ...domainParams(), schemaID: 'no-such-schema' } }, 422, 'SchemaNotFound'],
      // Keys are checked before the schema (decisions §7: key values first).
      [{ params: { schemaID: 'no-such-schema', objectKeys: [{ type: 'DomainName', value: '-bad-' }] } }, 422, 'InvalidKeyFormat'],
      [{ params: { schemaID: 'verdict', fileID: '00000000-0000-4000-8000-000000000000' } }, 422, 'FileNotFound'],
      [{ params: { ...domainParams(), fileID: '00000000-0000-4000-8000-000000000000' } }, 422, 'FileNotFound'],
    ];
    for (const [body, status, code] of cases) {
      const response = await post(body);
      expect({ body, status: response.status, code: response.body.code }).toEqual({ body, status, code });
    }
    for (const raw of [
      '[]',
      '"text"',
      'null',
      '{"params":',
      '{"params": {"schemaID": "verdict", "objectKeys": [1, 2]}}',
      '{"params": {"schemaID": "verdict", "objectKeys": [{"type": "DomainName", "value": "a.com"}]}, "n": 1e400}',
    ]) {
      const response = await t.insight.post('/insight/tasks').set('Content-Type', 'application/json').send(raw);
      expect({ raw, status: response.status, code: response.body.code }).toEqual({ raw, status: 400, code: 'InvalidData' });
    }
    expect(await take(t, 1000)).toEqual([]);
  });

  it('keeps intel and insight schemas apart', async () => {
    const intel = await t.intel.createSchema({ schemaID: 'intel-only', type: 'object' });
    expect(intel.status).toBe(201);
    const response = await post({ params: { ...domainParams(), schemaID: 'intel-only' } });
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('SchemaNotFound');
  });

  it('registers a task (201 {taskID}) and shows it exactly as wire-contract §7.6, keys normalised', async () => {
    const response = await post({ params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'WWW.Example.COM.' }] } });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body)).toEqual(['taskID']);
    expect(response.body.taskID).toMatch(UUID);

    expect(await viewTask(t, response.body.taskID)).toEqual({
      id: response.body.taskID,
      params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'www.example.com' }] },
      state: 'Pending',
    });
    // Completed: the normalised result appears; the params stay as they were.
    const [item] = await take(t, 1);
    expect(item.id).toBe(response.body.taskID);
    const done = await complete(t, item.id, {
      type: 'DomainName',
      keys: [{ type: 'DomainName', value: 'WWW.EXAMPLE.com' }],
      context: { verdict: 'benign', score: 3 },
    });
    expect(done.status).toBe(204);
    expect(await viewTask(t, item.id)).toEqual({
      id: item.id,
      params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'www.example.com' }] },
      state: 'Completed',
      result: { type: 'DomainName', keys: [{ type: 'DomainName', value: 'www.example.com' }], context: { verdict: 'benign', score: 3 } },
    });
  });

  it('infers a File from hash keys, lower-cases them and merges exact duplicates', async () => {
    const id = await registerTask(t, {
      schemaID: 'verdict',
      objectKeys: [
        { type: 'MD5Hash', value: MD5 },
        { type: 'SHA256Hash', value: SHA256 },
        { type: 'MD5Hash', value: MD5.toLowerCase() },
      ],
    });
    const view = await viewTask(t, id);
    expect(view.params).toEqual({
      schemaID: 'verdict',
      objectKeys: [
        { type: 'MD5Hash', value: MD5.toLowerCase() },
        { type: 'SHA256Hash', value: SHA256.toLowerCase() },
      ],
    });
    const [item] = await take(t, 1);
    expect(item).toEqual({ id, createdAt: expect.any(String), params: view.params });
    const failed = await fail(t, id, { code: 'ErrTestCode', message: 'Error test code' });
    expect(failed.status).toBe(204);
    expect(await viewTask(t, id)).toEqual({
      id,
      params: view.params,
      state: 'Failed',
      error: { code: 'ErrTestCode', message: 'Error test code' },
    });
  });

  it('accepts a task naming an existing filebox file, alone or with keys; objectKeys [] beside a file means no keys', async () => {
    const upload = await t.filebox.put('/filebox/files').attach('file', Buffer.from('sample content'), 'sample.bin');
    expect(upload.status).toBe(201);
    const fileID = upload.body.fileID as string;

    const alone = await registerTask(t, { schemaID: 'verdict', fileID: fileID.toUpperCase() });
    expect(await viewTask(t, alone)).toEqual({ id: alone, params: { schemaID: 'verdict', fileID }, state: 'Pending' });
    const emptyKeys = await registerTask(t, { schemaID: 'verdict', objectKeys: [], fileID });
    expect((await viewTask(t, emptyKeys)).params).toEqual({ schemaID: 'verdict', fileID });
    const both = await registerTask(t, { ...domainParams('file.example'), fileID });
    expect((await viewTask(t, both)).params).toEqual({ ...domainParams('file.example'), fileID });

    expect(await take(t, 10)).toEqual([
      { id: alone, createdAt: expect.any(String), params: { schemaID: 'verdict', fileID } },
      { id: emptyKeys, createdAt: expect.any(String), params: { schemaID: 'verdict', fileID } },
      { id: both, createdAt: expect.any(String), params: { ...domainParams('file.example'), fileID } },
    ]);
  });

  it('answers 404 NotFound for an unknown or malformed task id', async () => {
    for (const path of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '1', '00000000-0000-4000-8000-00000000000g']) {
      const response = await t.insight.task(path);
      expect({ path, status: response.status, code: response.body.code }).toEqual({ path, status: 404, code: 'NotFound' });
    }
  });

  it('accepts the task id in upper case and shows it in lower case', async () => {
    const id = await registerTask(t, domainParams('upper.example'));
    const response = await t.insight.task(id.toUpperCase());
    expect(response.status).toBe(200);
    expect(response.body.id).toBe(id);
    await take(t, 1000);
  });

  it('requires Write on tasks to register and Read on tasks to view (or *Children on insight)', async () => {
    const id = await registerTask(t, domainParams('perm.example'));
    const readOnly = await createKey(t, { permissions: [{ resource: 5, actions: ['Read'] }] });
    const writeOnly = await createKey(t, { permissions: [{ resource: 5, actions: ['Write'] }] });
    const children = await createKey(t, { permissions: [{ resource: 3, actions: ['ReadChildren', 'WriteChildren'] }] });
    const queueOnly = await createKey(t, { permissions: [{ resource: 6, actions: ['Write'] }] });
    const body = { params: domainParams('perm.example') };

    let response = await t.insight.as(readOnly.key).post('/insight/tasks', body);
    expectError(response, 'MissingPermissions');
    response = await t.insight.as(queueOnly.key).post('/insight/tasks', body);
    expectError(response, 'MissingPermissions');
    response = await t.insight.as(writeOnly.key).task(id);
    expectError(response, 'MissingPermissions');
    response = await t.http().post('/insight/tasks').send(body);
    expectError(response, 'Unauthorized');

    response = await t.insight.as(readOnly.key).task(id);
    expect(response.status).toBe(200);
    response = await t.insight.as(writeOnly.key).post('/insight/tasks', body);
    expect(response.status).toBe(201);
    response = await t.insight.as(children.key).post('/insight/tasks', body);
    expect(response.status).toBe(201);
    response = await t.insight.as(children.key).task(id);
    expect(response.status).toBe(200);
    await take(t, 1000);
  });

  it('answers 429 LimitExceeded with Retry-After once the (tasks, Write) limit is used up, and registers nothing', async () => {
    const limited = await createKey(t, {
      permissions: [{ resource: 5, actions: ['Read', 'Write'] }],
      limits: [{ resource: 5, action: 'Write', limit: 2 }],
    });
    expect(await take(t, 1000)).toEqual([]);
    const send = () => t.insight.as(limited.key).post('/insight/tasks', { params: domainParams('limited.example') });

    const first = await send();
    expect(first.status).toBe(201);
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect(first.headers['ratelimit-remaining']).toBe('1');
    const second = await send();
    expect(second.status).toBe(201);
    expect(second.headers['ratelimit-remaining']).toBe('0');

    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('LimitExceeded');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(86400);
    expect(refused.headers['ratelimit-limit']).toBe('2');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['ratelimit-reset']).toMatch(/^\d+$/);

    // Reading is not limited; the refused registration left no task behind.
    const view = await t.insight.as(limited.key).task(first.body.taskID);
    expect(view.status).toBe(200);
    const queued = await take(t, 1000);
    expect(queued.map((item) => item.id).sort()).toEqual([first.body.taskID, second.body.taskID].sort());
  });
});
