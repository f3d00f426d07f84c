import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { download, uploadFile } from '../filebox/filebox.helpers.js';
import { complete, fail, registerSchema, registerTask, take } from '../insight/insight-support.js';
import { createCollection, listAll } from '../intel/objects.helpers.js';
import { createKey, tokenFor } from '../support/factories.js';
import { freePort } from '../support/processes.js';
import { sampleOf, scrape, type MetricFamily } from '../support/prometheus.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('GET /metrics on METRICS_PORT', () => {
  let t: TestApp;
  let metricsPort: number;
  const metrics = () => scrape(`http://127.0.0.1:${metricsPort}/metrics`);
  /** Scrapes every 20 ms until `condition` holds (true) or 20 s have passed (false): the suite shares two cores. */
  const scrapeUntil = async (condition: (families: Map<string, MetricFamily>) => boolean): Promise<boolean> => {
    for (let attempt = 0; attempt < 1000; attempt++) {
      if (condition((await metrics()).families)) return true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  };

  beforeAll(async () => {
    metricsPort = await freePort();
    t = await createTestApp({ METRICS_PORT: String(metricsPort) });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers the Prometheus text format, process metrics included; nothing else is served there', async () => {
    const { contentType, families } = await metrics();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(families.has(name)).toBe(true);
    }
    expect(families.get('ids_http_request_duration_seconds')?.type).toBe('histogram');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('counts requests by route template, method and status, never by raw path', async () => {
    await createCollection(t, 'metrics-secretive-name');
    const route = { method: 'GET', route: '/intel/collections/:collectionName' };
    const before = await metrics();
    for (let i = 0; i < 3; i++) {
      expect((await t.http().get('/intel/collections/metrics-secretive-name').set('X-Api-Key', t.adminKey)).status).toBe(200);
    }
    expect((await t.http().get('/intel/collections/no-such-collection').set('X-Api-Key', t.adminKey)).status).toBe(404);
    expect((await t.http().get('/no/such/path/12345')).status).toBe(404);
    const after = await metrics();
    const delta = (labels: Record<string, string>) =>
      sampleOf(after.families, 'ids_http_request_duration_seconds', labels) - sampleOf(before.families, 'ids_http_request_duration_seconds', labels);
    expect(delta({ ...route, status: '200' })).toBe(3);
    expect(delta({ ...route, status: '404' })).toBe(1);
    expect(delta({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    const labelValues = after.families.get('ids_http_request_duration_seconds')!.samples.flatMap((sample) => Object.values(sample.labels));
    expect(labelValues.filter((value) => /secretive|no-such|12345/.test(value))).toEqual([]);
    // The scrape of `after` happened after the requests ended: none is in flight.
    expect(sampleOf(after.families, 'ids_http_requests_in_flight')).toBe(0);
  });

  it('counts change-feed writes (single and batch), cache lookups and reports the database pool', async () => {
    await createCollection(t, 'metrics-feed');
    const before = await metrics();
    const add = (value: string) =>
      t
        .http()
        .post('/intel/collections/metrics-feed/objects')
        .set('X-Api-Key', t.adminKey)
        .send({
          type: 'File',
          keys: [{ type: 'MD5Hash', value }],
        });
    expect((await add('0'.repeat(31) + '1')).status).toBe(204);
    expect((await add('0'.repeat(31) + '2')).status).toBe(204);
    const removed = await t
      .http()
      .delete(`/intel/collections/metrics-feed/objects?objectKeyType=MD5Hash&objectKey=${'0'.repeat(31)}1`)
      .set('X-Api-Key', t.adminKey);
    expect(removed.status).toBe(204);
    const batch = await t
      .http()
      .post('/intel/collections/metrics-feed/objects/batch')
      .set('X-Api-Key', t.adminKey)
      .send([{ type: 'File', keys: [{ type: 'MD5Hash', value: '0'.repeat(31) + '3' }] }, { remove: { type: 'MD5Hash', value: '0'.repeat(31) + '2' } }]);
    expect(batch.status).toBe(200);
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string> = {}) => sampleOf(after.families, name, labels) - sampleOf(before.families, name, labels);
    expect(delta('ids_changes_written_total', { operation: 'Add' })).toBe(3);
    expect(delta('ids_changes_written_total', { operation: 'Remove' })).toBe(2);
    // Each write looked the collection up in its cache; the admin key's record is cached too.
    expect(
      delta('ids_cache_lookups_total', { cache: 'collection', result: 'hit' }) + delta('ids_cache_lookups_total', { cache: 'collection', result: 'miss' }),
    ).toBeGreaterThanOrEqual(3);
    expect(delta('ids_cache_lookups_total', { cache: 'key', result: 'hit' })).toBeGreaterThanOrEqual(1);
    const pool = (state: string) => sampleOf(after.families, 'ids_db_pool_connections', { state });
    expect(pool('idle') + pool('in_use')).toBeGreaterThan(0);
    expect(pool('waiting')).toBe(0);
  });

  it('counts tasks taken, completed and failed, and reports pending and leased ones', async () => {
    await registerSchema(t);
    const first = await registerTask(t);
    const second = await registerTask(t);
    await registerTask(t);
    let scraped = await metrics();
    const taskState = (families: Map<string, MetricFamily>, state: string) => sampleOf(families, 'ids_tasks', { state });
    expect({ pending: taskState(scraped.families, 'pending'), leased: taskState(scraped.families, 'leased') }).toEqual({ pending: 3, leased: 0 });
    const before = scraped.families;

    expect((await take(t, 2)).map((task) => task.id).sort()).toEqual([first, second].sort());
    expect((await complete(t, first)).status).toBe(204);
    expect((await fail(t, second)).status).toBe(204);
    scraped = await metrics();
    const delta = (name: string) => sampleOf(scraped.families, name) - sampleOf(before, name);
    expect({ taken: delta('ids_tasks_taken_total'), completed: delta('ids_tasks_completed_total'), failed: delta('ids_tasks_failed_total') }).toEqual({
      taken: 2,
      completed: 1,
      failed: 1,
    });
    expect({ pending: taskState(scraped.families, 'pending'), leased: taskState(scraped.families, 'leased') }).toEqual({ pending: 1, leased: 0 });
  });

  it('counts file bytes uploaded and downloaded', async () => {
    const key = await createKey(t, { permissions: [{ resource: 4, actions: ['Read', 'Write'] }] });
    const token = await tokenFor(t, key.key);
    const before = await metrics();
    const content = Buffer.alloc(100_000, 7);
    const uploaded = await uploadFile(t, token, content);
    expect(uploaded.status).toBe(201);
    const fileId = (uploaded.json() as { fileID: string }).fileID;
    expect((await download(t, token, fileId)).body.length).toBe(100_000);
    expect((await download(t, token, fileId, 'bytes=0-999')).body.length).toBe(1000);
    const after = await metrics();
    const delta = (name: string) => sampleOf(after.families, name) - sampleOf(before.families, name);
    expect({ up: delta('ids_filebox_uploaded_bytes_total'), down: delta('ids_filebox_downloaded_bytes_total') }).toEqual({
      up: 100_000,
      down: 101_000,
    });
  });

  it('reports long-poll requests while they wait (ids_longpoll_waiters)', async () => {
    await createCollection(t, 'metrics-polled');
    const { changesCursor } = await listAll(t, 'metrics-polled');
    const waiters = async () => sampleOf((await metrics()).families, 'ids_longpoll_waiters');
    expect(await waiters()).toBe(0);
    const waiting = t
      .http()
      .get(`/intel/collections/metrics-polled/objects/changes?cursor=${changesCursor}&wait=60`)
      .set('X-Api-Key', t.adminKey)
      .then((response) => response);
    // The request parks once its first read found nothing: scrape until the gauge shows it (no fixed sleep).
    expect(await scrapeUntil((families) => sampleOf(families, 'ids_longpoll_waiters') === 1)).toBe(true);
    const added = await t
      .http()
      .post('/intel/collections/metrics-polled/objects')
      .set('X-Api-Key', t.adminKey)
      .send({ type: 'File', keys: [{ type: 'MD5Hash', value: 'f'.repeat(32) }] });
    expect(added.status).toBe(204);
    const answered = await waiting;
    expect({ status: answered.status, changes: (answered.body as unknown[]).length }).toEqual({ status: 200, changes: 1 });
    // The waiter was released before the answer was sent.
    expect(await waiters()).toBe(0);
  });

  it('counts a request whose client left before the answer as status "aborted", and releases its wait', async () => {
    await createCollection(t, 'metrics-left');
    const { changesCursor } = await listAll(t, 'metrics-left');
    const route = { method: 'GET', route: '/intel/collections/:collection_id/objects/changes', status: 'aborted' };
    const before = sampleOf((await metrics()).families, 'ids_http_request_duration_seconds', route);
    const address = new URL(t.url);
    const request = http.get({
      host: address.hostname,
      port: address.port,
      path: `/intel/collections/metrics-left/objects/changes?cursor=${changesCursor}&wait=60`,
      headers: { 'X-Api-Key': t.adminKey },
      agent: false,
    });
    request.on('error', () => undefined);
    expect(await scrapeUntil((families) => sampleOf(families, 'ids_longpoll_waiters') === 1)).toBe(true);
    request.destroy();
    expect(
      await scrapeUntil(
        (families) =>
          sampleOf(families, 'ids_http_request_duration_seconds', route) === before + 1 &&
          sampleOf(families, 'ids_longpoll_waiters') === 0 &&
          sampleOf(families, 'ids_http_requests_in_flight') === 0,
      ),
    ).toBe(true);
  });

  it('keeps a registry per application: a second one in the same process counts on its own', async () => {
    const secondPort = await freePort();
    const second = await createTestApp({ METRICS_PORT: String(secondPort) });
    try {
      await second.http().get('/health/live');
      const own = await scrape(`http://127.0.0.1:${secondPort}/metrics`);
      expect(sampleOf(own.families, 'ids_http_request_duration_seconds', { route: '/health/live' })).toBe(1);
    } finally {
      await second.close();
    }
  });
});
