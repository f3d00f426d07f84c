import { describe, expect, it } from '@jest/globals';
import { BUILTIN_RESOURCES } from '../../src/common/guard/access.js';
import type { RunView, SourceView } from '../../src/sources/dto/source.dto.js';
import { SourceRunsService } from '../../src/sources/source-runs.service.js';
import { freshCollections } from '../intel/objects.helpers.js';
import { createKey, sourceFactory } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import type { FeedServer } from './feed-server.js';
import { withSourceApp } from './sources.helpers.js';

/** What a history entry says of who made a change (extensions §14). */
interface HistoryEntry {
  operation: string;
  reason: string | null;
  keyID: number | null;
  requestID: string | null;
  via: string;
  source: string | null;
}

/**
 * Fixes of issue 44 in sources, through HTTP: a source's `nextRunAt` is a timestamp while it is enabled (a
 * source due at once shows when it became due), and `DELETE /intel/sources/{name}` writes with its request's
 * origin (the deleting key and request id on the withdrawals of its claims).
 */
describe('source fixes', () => {
  let t: TestApp;
  let feed: FeedServer;

  // The schedule's timer is off (an hour): the tests tick it themselves.
  withSourceApp((app) => ({ t, feed } = app));

  const fresh = freshCollections(() => t, 'fixes');
  const tick = () => t.app.get(SourceRunsService).runDue();
  const view = async (name: string) => {
    const response = await t.sources.source(name);
    expect(response.status).toBe(200);
    return { body: response.body as SourceView, etag: response.headers.etag as string };
  };
  const runs = async (name: string) => (await t.sources.runs(name)).body as RunView[];
  const sources = sourceFactory(
    () => t,
    'fixes',
    (path) => feed.url(path),
  );
  async function create(name: string, path: string, extra: Record<string, unknown> = {}): Promise<string> {
    const collection = await fresh();
    await sources.text(collection, path, { name, intervalSeconds: 3600, ...extra });
    return collection;
  }
  async function patch(name: string, body: Record<string, unknown>): Promise<void> {
    const { etag } = await view(name);
    expect((await t.sources.update(name, body, etag)).status).toBe(204);
  }
  /** The time `nextRunAt` says, checked to lie between two moments of the test (the database shares this clock). */
  const within = (at: string | null, from: number, to: number) => {
    expect(typeof at).toBe('string');
    const time = Date.parse(at!);
    expect(time).toBeGreaterThanOrEqual(from - 1000);
    expect(time).toBeLessThanOrEqual(to + 1000);
  };

  it('a new source shows when it became due, runs at once, then shows its next scheduled run', async () => {
    feed.list('/new.txt', '198.51.100.1\n');
    const before = Date.now();
    await create('new', '/new.txt');
    const created = (await view('new')).body;
    within(created.nextRunAt, before, Date.now());
    expect(created.lastRunAt).toBeNull();
    // Due at once: the next tick runs it.
    await tick();
    const [run] = await runs('new');
    expect(run).toMatchObject({ trigger: 'schedule', outcome: 'ok' });
    const ran = (await view('new')).body;
    within(ran.nextRunAt, Date.parse(run.startedAt) + 3_600_000, Date.parse(run.finishedAt!) + 3_600_000);
  });

  it('a disabled source has no next run; enabled again, it shows when it became due and runs at once', async () => {
    feed.list('/toggled.txt', '198.51.100.2\n');
    await create('toggled', '/toggled.txt', { enabled: false });
    expect((await view('toggled')).body.nextRunAt).toBeNull();
    await tick();
    expect(await runs('toggled')).toEqual([]);
    const before = Date.now();
    await patch('toggled', { enabled: true });
    within((await view('toggled')).body.nextRunAt, before, Date.now());
    await tick();
    expect((await runs('toggled')).map((run) => run.trigger)).toEqual(['schedule']);
    // Disabled after a run: no next run shown; enabled again: due at once, not an interval later.
    await patch('toggled', { enabled: false });
    expect((await view('toggled')).body.nextRunAt).toBeNull();
    const again = Date.now();
    await patch('toggled', { enabled: true });
    within((await view('toggled')).body.nextRunAt, again, Date.now());
    await tick();
    expect(await runs('toggled')).toHaveLength(2);
  });

  it("DELETE writes with its request's origin: the withdrawals of its claims carry the deleting key and request id", async () => {
    const writer = await createKey(t, { permissions: [{ resource: BUILTIN_RESOURCES.intel.id, actions: ['Write'] }] });
    feed.list('/deleted.txt', '198.51.100.3\n');
    const collection = await create('deleted', '/deleted.txt');
    await tick();
    expect((await runs('deleted'))[0]).toMatchObject({ outcome: 'ok', added: 1 });

    const deleted = await t.sources.as(writer.key).remove('deleted').set('X-Request-Id', 'delete-source-1');
    expect(deleted.status).toBe(204);
    expect(deleted.headers['x-request-id']).toBe('delete-source-1');
    const history = await t.intel.history(collection, '?objectKeyType=IPAddress&objectKey=198.51.100.3');
    expect(history.status).toBe(200);
    const [removal, add] = history.body as HistoryEntry[];
    // The withdrawal is the source's (via source, its name), made by the deleting request.
    expect(removal).toMatchObject({
      operation: 'Remove',
      reason: 'Withdrawn',
      via: 'source',
      source: 'deleted',
      keyID: writer.id,
      requestID: 'delete-source-1',
    });
    // The run that added it: scheduled, so no key, and the run's id.
    expect(add).toMatchObject({ operation: 'Add', via: 'source', source: 'deleted', keyID: null, requestID: expect.any(String) });
    expect((await t.sources.source('deleted')).status).toBe(404);
  });

  it('DELETE without an X-Request-Id records the id it answers', async () => {
    feed.list('/unnamed.txt', '198.51.100.4\n');
    const collection = await create('unnamed', '/unnamed.txt');
    await tick();
    const deleted = await t.sources.remove('unnamed');
    expect(deleted.status).toBe(204);
    const history = await t.intel.history(collection, '?objectKeyType=IPAddress&objectKey=198.51.100.4');
    expect((history.body as HistoryEntry[])[0]).toMatchObject({
      operation: 'Remove',
      reason: 'Withdrawn',
      via: 'source',
      source: 'unnamed',
      requestID: deleted.headers['x-request-id'],
    });
  });
});
