import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SourceRunsService } from '../../src/sources/source-runs.service.js';
import { freshCollections, listAll } from '../intel/objects.helpers.js';
import { eventually } from '../support/eventually.js';
import { sourceFactory } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { FeedServer } from './feed-server.js';

/** The schedule across instances (extensions §13): one run per due time, takeover of a dead lease, back-off. */
describe('source schedule across instances', () => {
  let instances: TestApp[];
  let feed: FeedServer;

  beforeAll(async () => {
    // The timer is off (an hour); the tests tick each instance's schedule themselves, all at once.
    const settings = { SOURCE_POLL_SECONDS: '3600', SOURCE_LEASE_SECONDS: '30' };
    const first = await createTestApp(settings);
    instances = [first, await createTestApp(settings, first), await createTestApp(settings, first)];
    feed = await new FeedServer().start();
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await feed.stop();
  });

  const t = () => instances[0];
  const fresh = freshCollections(t, 'schedule');
  const tickAll = () => Promise.all(instances.map((instance) => instance.app.get(SourceRunsService).runDue()));
  const runsOf = async (name: string) =>
    (
      await t().db.query(
        `SELECT r.id, r.trigger, r.outcome, r.error->>'code' AS code FROM sources_run r JOIN sources_source s ON s.id = r.source_id
          WHERE s.name = $1 ORDER BY r.started_at`,
        [name],
      )
    ).rows as { id: string; trigger: string; outcome: string | null; code: string | null }[];
  const sources = sourceFactory(t, 'schedule', (path) => feed.url(path));
  /** A source of the given name on a fresh collection, due every minute; returns the collection. */
  async function source(name: string, path: string, extra: Record<string, unknown> = {}) {
    const c = await fresh();
    await sources.text(c, path, { name, intervalSeconds: 60, ...extra });
    return c;
  }
  const view = async (name: string) => (await t().sources.source(name)).body;

  it('a new source runs at once, on exactly one of three instances ticking together; then again once per due time', async () => {
    feed.list('/once.txt', '198.51.100.1\n');
    const c = await source('once', '/once.txt');
    await tickAll();
    expect(feed.hits('/once.txt')).toBe(1);
    expect(await runsOf('once')).toEqual([{ id: expect.any(String), trigger: 'schedule', outcome: 'ok', code: null }]);
    // The next run is due an interval after this one started (however long it took).
    const after = await view('once');
    const [started] = (await t().sources.runs('once')).body as { startedAt: string }[];
    expect(Date.parse(after.nextRunAt) - Date.parse(started.startedAt)).toBeGreaterThanOrEqual(59_000);
    // Not due: nothing runs.
    await tickAll();
    expect(feed.hits('/once.txt')).toBe(1);
    // The due time comes (moved back in the database): one run again.
    await t().db.query(`UPDATE sources_source SET next_run_at = now() - interval '1 second' WHERE name = 'once'`);
    await tickAll();
    expect(feed.hits('/once.txt')).toBe(2);
    expect(await runsOf('once')).toHaveLength(2);
    expect((await listAll(t(), c, 10)).objects).toHaveLength(1);
  });

  it('a manual run does not move nextRunAt', async () => {
    feed.list('/manual.txt', '198.51.100.2\n');
    await source('manual', '/manual.txt');
    await tickAll();
    const before = (await view('manual')).nextRunAt;
    expect((await t().sources.start('manual')).status).toBe(202);
    await eventually(async () => (await runsOf('manual')).every((run) => run.outcome !== null) && (await runsOf('manual')).length === 2);
    expect((await view('manual')).nextRunAt).toBe(before);
  });

  it('the run of a killed instance (its lease expired) is taken over by another and completed; the dead run is closed as failed', async () => {
    feed.list('/dead.txt', '198.51.100.3\n');
    const c = await source('dead', '/dead.txt');
    // As a killed instance leaves it: a lease nobody renews, a run without an end, nothing written.
    const dead = randomUUID();
    await t().db.query(
      `WITH s AS (UPDATE sources_source SET lease_run_id = $1, lease_until = now() - interval '1 second', lease_trigger = 'schedule',
                    next_run_at = now() + interval '1 hour' WHERE name = 'dead' RETURNING id)
       INSERT INTO sources_run (id, source_id, trigger) SELECT $1, id, 'schedule' FROM s`,
      [dead],
    );
    await tickAll();
    const runs = await runsOf('dead');
    expect(runs).toHaveLength(2);
    expect(runs.find((run) => run.id === dead)).toMatchObject({ outcome: 'failed', code: 'LeaseExpired' });
    expect(runs.find((run) => run.id !== dead)).toMatchObject({ outcome: 'ok' });
    expect(feed.hits('/dead.txt')).toBe(1);
    expect((await listAll(t(), c, 10)).objects).toHaveLength(1);
  });

  it('a run whose lease was taken over meanwhile writes nothing (LeaseLost)', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    feed.routes.set('/slow.txt', (_request, response) => {
      response.writeHead(200);
      response.write('198.51.100.4\n');
      void held.then(() => response.end('198.51.100.5\n'));
    });
    const c = await source('slow', '/slow.txt');
    const running = instances[1].app.get(SourceRunsService).runDue();
    await eventually(() => feed.hits('/slow.txt') === 1);
    // Another instance took the lease over (as after a pause longer than the lease).
    await t().db.query(`UPDATE sources_source SET lease_run_id = $1 WHERE name = 'slow'`, [randomUUID()]);
    release();
    await running;
    expect(await runsOf('slow')).toEqual([{ id: expect.any(String), trigger: 'schedule', outcome: 'failed', code: 'LeaseLost' }]);
    expect((await listAll(t(), c, 10)).objects).toEqual([]);
    expect(
      (await t().db.query(`SELECT count(*)::int AS n FROM sources_claim c JOIN sources_source s ON s.id = c.source_id WHERE s.name = 'slow'`)).rows[0].n,
    ).toBe(0);
  });

  it('an instance that stops during a run ends it at once, writing nothing; the run is due again and another instance completes it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    feed.routes.set('/stopping.txt', (_request, response) => {
      response.writeHead(200);
      response.write('198.51.100.6\n');
      void held.then(() => response.end());
    });
    const c = await source('stopping', '/stopping.txt');
    const leaving = await createTestApp({ SOURCE_POLL_SECONDS: '3600' }, t());
    const running = leaving.app.get(SourceRunsService).runDue();
    await eventually(() => feed.hits('/stopping.txt') === 1);
    await leaving.close();
    await running;
    expect(await runsOf('stopping')).toEqual([{ id: expect.any(String), trigger: 'schedule', outcome: 'failed', code: 'Interrupted' }]);
    expect((await listAll(t(), c, 10)).objects).toEqual([]);
    expect(await view('stopping')).toMatchObject({ consecutiveFailures: 0 });
    release();
    feed.list('/stopping.txt', '198.51.100.6\n');
    await tickAll();
    expect((await runsOf('stopping')).map((run) => run.outcome)).toEqual(['failed', 'ok']);
    expect((await listAll(t(), c, 10)).objects).toHaveLength(1);
  });

  it('a failed scheduled run backs off, honouring Retry-After', async () => {
    feed.routes.set('/busy.txt', { status: 429, body: 'later', headers: { 'retry-after': '7200' } });
    await source('busy', '/busy.txt');
    await tickAll();
    const after = await view('busy');
    expect(after).toMatchObject({ state: 'failing', consecutiveFailures: 1 });
    expect(Date.parse(after.nextRunAt) - Date.parse(after.lastRunAt)).toBeGreaterThanOrEqual(7_199_000);
    feed.routes.set('/busy.txt', { status: 500, body: 'down' });
    await t().db.query(`UPDATE sources_source SET next_run_at = now() - interval '1 second' WHERE name = 'busy'`);
    await tickAll();
    const again = await view('busy');
    expect(again.consecutiveFailures).toBe(2);
    // 60 s × 2^1: the back-off doubles, never sooner than the interval.
    expect(Date.parse(again.nextRunAt) - Date.parse(again.lastRunAt)).toBeGreaterThanOrEqual(119_000);
  });
});
