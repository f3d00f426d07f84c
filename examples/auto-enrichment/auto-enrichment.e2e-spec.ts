import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DomainEvents } from '../../src/common/events/domain-events.js';
import { ConfigError, loadConfig } from '../../src/config/app-config.js';
import { TasksService } from '../../src/insight/tasks.service.js';
import { registerSchema } from '../../test/insight/insight-support.js';
import { createCollection } from '../../test/intel/objects.helpers.js';
import { eventually } from '../../test/support/eventually.js';
import { createTestApp, type TestApp } from '../../test/support/test-app.js';
import { AutoEnrichment } from './auto-enrichment.module.js';

const EXAMPLE = 'examples/auto-enrichment/auto-enrichment.module.ts';

/** The example extension, loaded by configuration like any deployment would load it. */
describe('examples/auto-enrichment', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      EXTENSIONS: EXAMPLE,
      EXT_AUTO_ENRICHMENT_COLLECTIONS: 'watched, also-watched',
      EXT_AUTO_ENRICHMENT_SCHEMA: 'verdict',
    });
    await registerSchema(t);
    for (const name of ['watched', 'also-watched', 'ignored']) await createCollection(t, name);
  });
  afterAll(async () => {
    await t.close();
  });

  const add = (collection: string, body: object) => t.http().post(`/intel/collections/${collection}/objects`).set('X-Api-Key', t.adminKey).send(body);
  const queued = async () =>
    (await t.http().post('/insight/task-queue/executing-tasks').set('X-Api-Key', t.adminKey).send({ limit: 100 })).body as {
      params: { schemaID: string; objectKeys?: { type: string; value: string }[] };
    }[];

  it('registers one task per new object in the watched collections, none for updates or other collections', async () => {
    const domain = { type: 'DomainName', keys: [{ type: 'DomainName', value: 'Evil.Example.' }], context: {} };
    expect((await add('watched', domain)).status).toBe(204);
    expect((await add('watched', { ...domain, context: { seen: 2 } })).status).toBe(204); // an Update
    expect((await add('ignored', { type: 'URL', keys: [{ type: 'URL', value: 'http://x.example/' }], context: {} })).status).toBe(204);
    const file = { type: 'File', keys: [{ type: 'MD5Hash', value: '627fcdb6cc9a5e16d657ca6cdef0a6bb' }], context: {} };
    expect((await add('also-watched', file)).status).toBe(204);
    // A network is no insight object: no task.
    expect((await add('watched', { type: 'IPNetwork', keys: [{ type: 'IPNetwork', value: '10.0.0.0/8' }], context: {} })).status).toBe(204);

    const taken: Awaited<ReturnType<typeof queued>> = [];
    await eventually(async () => {
      taken.push(...(await queued()));
      return taken.length >= 2;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    taken.push(...(await queued()));
    expect(taken.map((task) => task.params).sort((a, b) => a.objectKeys![0].type.localeCompare(b.objectKeys![0].type))).toEqual([
      { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'evil.example' }] },
      { schemaID: 'verdict', objectKeys: [{ type: 'MD5Hash', value: '627fcdb6cc9a5e16d657ca6cdef0a6bb' }] },
    ]);
  });

  it('a listener that throws or rejects breaks neither the request nor the other listeners', async () => {
    const events = t.app.get(DomainEvents);
    const offThrow = events.on('intel.object.added', () => {
      throw new Error('listener failure (expected by this test)');
    });
    const offReject = events.on('intel.object.added', async () => Promise.reject(new Error('rejected (expected by this test)')));
    try {
      const response = await add('watched', { type: 'DomainName', keys: [{ type: 'DomainName', value: 'after.example' }], context: {} });
      expect(response.status).toBe(204);
      const tasks = await eventually(async () => {
        const found = await queued();
        return found.length > 0 && found;
      });
      expect(tasks.map((task) => task.params.objectKeys)).toEqual([[{ type: 'DomainName', value: 'after.example' }]]);
    } finally {
      offThrow();
      offReject();
    }
  });

  it('delivers task and file events after the commit', async () => {
    const events = t.app.get(DomainEvents);
    const seen: string[] = [];
    const offs = [
      events.on('insight.task.registered', ({ taskID }) => void seen.push(`registered ${taskID}`)),
      events.on('insight.task.completed', ({ taskID, result }) => void seen.push(`completed ${taskID} ${result.type}`)),
      events.on('filebox.file.stored', ({ fileID, size }) => void seen.push(`stored ${fileID} ${size}`)),
    ];
    try {
      const registered = await t
        .http()
        .post('/insight/tasks')
        .set('X-Api-Key', t.adminKey)
        .send({ params: { schemaID: 'verdict', objectKeys: [{ type: 'DomainName', value: 'task.example' }] } });
      const taskID = registered.body.taskID as string;
      expect(await queued()).toHaveLength(1);
      const result = { type: 'DomainName', keys: [{ type: 'DomainName', value: 'task.example' }], context: { verdict: 'benign' } };
      expect((await t.http().post('/insight/task-queue/completed-tasks').set('X-Api-Key', t.adminKey).send({ taskID, result })).status).toBe(204);
      const upload = await t.http().put('/filebox/files').set('X-Api-Key', t.adminKey).attach('file', Buffer.from('hello'), 'hello.txt');
      expect(upload.status).toBeLessThan(300);
      const fileID = upload.body.fileID as string;
      const expected = [`registered ${taskID}`, `completed ${taskID} DomainName`, `stored ${fileID} 5`];
      expect(await eventually(() => seen.length >= 3 && [...seen])).toEqual(expected);
    } finally {
      for (const off of offs) off();
    }
  });

  it('a start names a missing extension file; the example refuses to start without its settings', async () => {
    expect(() => loadConfig({ EXTENSIONS: 'examples/nothing-here.js' })).toThrow(ConfigError);
    const services = [t.app.get(DomainEvents), t.app.get(TasksService)] as const;
    expect(() => new AutoEnrichment({ EXT_AUTO_ENRICHMENT_SCHEMA: 'verdict' }, ...services)).toThrow('EXT_AUTO_ENRICHMENT_COLLECTIONS is required');
  });
});
