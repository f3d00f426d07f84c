import type { ServerResponse } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { SourceRunsService } from '../../src/sources/source-runs.service.js';
import { freshCollections, listAll } from '../intel/objects.helpers.js';
import { sourceFactory } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import type { FeedServer } from './feed-server.js';
import { runNow, withSourceApp } from './sources.helpers.js';

const ips = (...n: number[]) => n.map((i) => `198.51.100.${i}`).join('\n') + '\n';

/** A Cloudflare-style maintenance page, served with 200: links, host names and an address in it. */
const MAINTENANCE = `<!DOCTYPE html>
<html lang="en"><head><title>Down for maintenance | feeds.example.com</title></head>
<body><p>We are down for maintenance. See https://status.example.com/ or mail ops@example.org.</p>
<p>Ray ID 7a1b2c3d4e5f, your address 203.0.113.9</p></body></html>
`;

/** Guards of source runs (extensions §13): bodies that are not what their kind says, the suspect guard and its state. */
describe('source run guards', () => {
  let t: TestApp;
  let feed: FeedServer;

  withSourceApp((app) => ({ t, feed } = app), { SOURCE_TIMEOUT_SECONDS: '3' });

  const fresh = freshCollections(() => t, 'guards');
  const { text: source } = sourceFactory(
    () => t,
    'guard',
    (path) => feed.url(path),
  );
  const run = (name: string) => runNow(t, name);
  const keysOf = async (collection: string) => (await listAll(t, collection, 100)).objects.map((object) => object.keys[0].value).sort();
  const stored = async (name: string) =>
    (await t.db.query(`SELECT etag, last_modified, body_digest, feed_state FROM sources_source WHERE name = $1`, [name])).rows[0] as Record<string, unknown>;
  const claims = async (name: string) => (await t.sources.claims(name)).body as { value: string; lastSeenAt: string; missedRuns: number }[];

  // First: the schedule's tick runs every due source of the app, and no other exists yet.
  it('a huge Retry-After of a scheduled run is capped at 24 h: the run is closed as failed, the next one due a day later', async () => {
    const c = await fresh();
    feed.routes.set('/later.txt', { status: 503, body: 'later', headers: { 'retry-after': '99999999999999999999' } });
    const name = await source(c, '/later.txt');
    await t.app.get(SourceRunsService).runDue();
    const [logged] = (await t.sources.runs(name)).body as { outcome: string; finishedAt: string | null }[];
    expect(logged).toMatchObject({ outcome: 'failed', finishedAt: expect.any(String), httpStatus: 503, error: { code: 'HttpStatus' } });
    const view = (await t.sources.source(name)).body as { nextRunAt: string; lastRunAt: string };
    const wait = Date.parse(view.nextRunAt) - Date.parse(view.lastRunAt);
    expect(wait).toBeGreaterThanOrEqual(86_399_000);
    expect(wait).toBeLessThanOrEqual(86_401_000);
  });

  it('an HTML page served with 200 fails a text, csv or ndjson run (HtmlPage, or NotJson for ndjson), changing nothing', async () => {
    const c = await fresh();
    feed.list('/list.txt', ips(1, 2), '"v1"');
    const text = await source(c, '/list.txt');
    expect(await run(text)).toMatchObject({ outcome: 'ok', added: 2 });
    const before = await stored(text);
    const claimsBefore = await claims(text);
    // By its media type, whatever the body.
    feed.routes.set('/list.txt', { body: MAINTENANCE, headers: { 'content-type': 'text/html; charset=UTF-8', etag: '"v2"' } });
    const byType = await run(text);
    expect(byType).toMatchObject({ outcome: 'failed', httpStatus: 200, added: 0, withdrawn: 0, error: { code: 'HtmlPage' } });
    expect(byType.error!.message).toMatch(/text\/html/);
    // By its first characters, served as text/plain (after blank lines).
    feed.routes.set('/list.txt', { body: `\n\n  ${MAINTENANCE}`, headers: { etag: '"v3"' } });
    expect(await run(text)).toMatchObject({ outcome: 'failed', error: { code: 'HtmlPage' } });
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2']);
    expect(await stored(text)).toEqual(before);
    expect(await claims(text)).toEqual(claimsBefore);

    feed.routes.set('/page.csv', { body: MAINTENANCE });
    const csv = await source(c, '/page.csv', { kind: 'csv', valueColumn: 'ioc' });
    expect(await run(csv)).toMatchObject({ outcome: 'failed', error: { code: 'HtmlPage' } });
    // ndjson: an HTML page, or any body none of whose lines is a JSON object.
    feed.routes.set('/page.json', { body: MAINTENANCE });
    const ndjson = await source(c, '/page.json', { kind: 'ndjson', valueField: 'cidr' });
    expect(await run(ndjson)).toMatchObject({ outcome: 'failed', error: { code: 'HtmlPage' } });
    feed.routes.set('/page.json', { body: 'Service temporarily unavailable\n203.0.113.0/24\n[1, 2]\n' });
    expect(await run(ndjson)).toMatchObject({ outcome: 'failed', error: { code: 'NotJson' } });
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2']);
    // A list whose value merely mentions html is still a list.
    feed.list('/list.txt', `# <html> is not at the start\n${ips(1, 2, 3)}`);
    expect(await run(text)).toMatchObject({ outcome: 'ok', added: 1 });
  });

  it('a binary body fails a line kind (NotUtf8), changing nothing', async () => {
    const c = await fresh();
    feed.routes.set('/bin.txt', {
      body: Buffer.from([0x31, 0x2e, 0x32, 0x0a, 0xff, 0xfe, 0x00, 0x80, 0x0a]),
      headers: { 'content-type': 'application/octet-stream' },
    });
    const name = await source(c, '/bin.txt');
    expect(await run(name)).toMatchObject({ outcome: 'failed', error: { code: 'NotUtf8' } });
    expect(await keysOf(c)).toEqual([]);
    expect(await stored(name)).toEqual({ etag: null, last_modified: null, body_digest: null, feed_state: null });
  });

  it('the suspect guard counts the claims held before the run: a body of as many entirely new values is suspect at the default ratio', async () => {
    const c = await fresh();
    feed.list('/swap.txt', ips(1, 2, 3, 4));
    const name = await source(c, '/swap.txt');
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 4 });
    feed.list('/swap.txt', ips(11, 12, 13, 14));
    expect(await run(name)).toMatchObject({ outcome: 'suspect', added: 4, withdrawn: 0 });
    expect((await claims(name)).map((claim) => claim.value)).toHaveLength(8);
    expect(await keysOf(c)).toHaveLength(8);
  });

  it('a suspect run stores no validator or digest: the next run fetches the whole body again and, with maxRemovalRatio raised, applies its removals', async () => {
    const c = await fresh();
    feed.list('/held.txt', ips(1, 2, 3, 4), '"h1"');
    const name = await source(c, '/held.txt');
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 4 });
    const success = (await t.sources.source(name)).body.lastSuccessAt as string;
    feed.list('/held.txt', ips(1, 9), '"h2"');
    expect(await run(name)).toMatchObject({ outcome: 'suspect', added: 1, withdrawn: 0 });
    expect(await stored(name)).toEqual({ etag: null, last_modified: null, body_digest: null, feed_state: null });
    // The same body again is weighed again (not notModified, not unchanged): still suspect.
    expect(await run(name)).toMatchObject({ outcome: 'suspect', httpStatus: 200, withdrawn: 0 });
    const view = await t.sources.source(name);
    expect(view.body).toMatchObject({ lastSuccessAt: success, claims: 5 });
    // The operator accepts the drop: the next run ends the claims held back.
    expect((await t.sources.update(name, { maxRemovalRatio: 1 }, view.headers.etag)).status).toBe(204);
    expect(await run(name)).toMatchObject({ outcome: 'ok', httpStatus: 200, added: 0, withdrawn: 3 });
    expect(feed.requests.filter((r) => r.path === '/held.txt').map((r) => r.headers['if-none-match'])).toEqual([undefined, '"h1"', undefined, undefined]);
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.9']);
    expect((await stored(name)).etag).toBe('"h2"');
    expect(await run(name)).toMatchObject({ outcome: 'notModified' });
  });

  it('PATCH of the url (or kind, collectionID, a reading setting) drops the stored validators, digest and feed state; of a guard it keeps them', async () => {
    const c = await fresh();
    feed.list('/old.txt', ips(1, 2), '"same"');
    feed.list('/new.txt', ips(1, 2, 3), '"same"');
    const name = await source(c, '/old.txt');
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 2 });
    const patch = async (body: Record<string, unknown>) => {
      const view = await t.sources.source(name);
      expect((await t.sources.update(name, body, view.headers.etag)).status).toBe(204);
    };
    await patch({ minItems: 2 });
    expect(await stored(name)).toMatchObject({ etag: '"same"', body_digest: expect.any(String) });
    await patch({ url: feed.url('/new.txt') });
    expect(await stored(name)).toEqual({ etag: null, last_modified: null, body_digest: null, feed_state: null });
    expect(await run(name)).toMatchObject({ outcome: 'ok', httpStatus: 200, added: 1 });
    expect(feed.requests.filter((r) => r.path === '/new.txt').map((r) => r.headers['if-none-match'])).toEqual([undefined]);
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3']);
    // A new context is written even though the feed would answer 304.
    await patch({ context: { feed: 'new' } });
    expect(await run(name)).toMatchObject({ outcome: 'ok', httpStatus: 200, updated: 3 });
  });

  it('lastSeenAt of a snapshot claim moves with notModified and unchanged runs (runs of the previous body), not for a claim the body no longer lists', async () => {
    const c = await fresh();
    feed.list('/seen.txt', ips(1, 2, 3), '"s1"');
    const name = await source(c, '/seen.txt', { removal: { policy: 'afterMissedRuns', runs: 5 } });
    await run(name);
    const lastSuccess = async () => (await t.sources.source(name)).body.lastSuccessAt as string;
    const seen = async () => Object.fromEntries((await claims(name)).map((claim) => [claim.value, claim.lastSeenAt]));
    const first = await seen();
    expect(first['198.51.100.1']).toBe(await lastSuccess());
    expect(await run(name)).toMatchObject({ outcome: 'notModified' });
    const afterNotModified = await seen();
    expect(afterNotModified['198.51.100.1']).toBe(await lastSuccess());
    expect(Date.parse(afterNotModified['198.51.100.1'])).toBeGreaterThan(Date.parse(first['198.51.100.1']));
    // Without the ETag the same objects are unchanged; 198.51.100.3 dropped keeps the time of its last listing.
    feed.list('/seen.txt', ips(2, 1));
    const listedLast = await lastSuccess();
    expect(await run(name)).toMatchObject({ outcome: 'ok', withdrawn: 0 });
    const dropped = (await seen())['198.51.100.3'];
    expect(dropped).toBe(listedLast);
    expect(await run(name)).toMatchObject({ outcome: 'unchanged' });
    const afterUnchanged = await seen();
    expect(afterUnchanged['198.51.100.2']).toBe(await lastSuccess());
    expect(Date.parse(afterUnchanged['198.51.100.2'])).toBeGreaterThan(Date.parse(dropped));
    expect(afterUnchanged['198.51.100.3']).toBe(dropped);
    expect(Date.parse(dropped)).toBeLessThan(Date.parse(afterUnchanged['198.51.100.2']));
  });

  it('a body that never ends is stopped at SOURCE_TIMEOUT_SECONDS (Timeout), nothing written', async () => {
    const c = await fresh();
    const open: ServerResponse[] = [];
    feed.routes.set('/endless.txt', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write(ips(1, 2));
      open.push(response);
    });
    const name = await source(c, '/endless.txt');
    expect(await run(name)).toMatchObject({ outcome: 'failed', httpStatus: 200, error: { code: 'Timeout' } });
    expect(await keysOf(c)).toEqual([]);
    for (const response of open) response.destroy();
  });

  it('Last-Modified is stored and sent as If-Modified-Since; a 304 to it is notModified', async () => {
    const c = await fresh();
    const stamp = 'Wed, 21 Oct 2026 07:28:00 GMT';
    feed.routes.set('/dated.txt', (request, response) => {
      if (request.headers['if-modified-since'] === stamp) return void response.writeHead(304).end();
      response.writeHead(200, { 'content-type': 'text/plain', 'last-modified': stamp }).end(ips(1));
    });
    const name = await source(c, '/dated.txt');
    expect(await run(name)).toMatchObject({ outcome: 'ok', added: 1 });
    expect((await stored(name)).last_modified).toBe(stamp);
    expect(await run(name)).toMatchObject({ outcome: 'notModified', httpStatus: 304 });
    expect(feed.requests.filter((r) => r.path === '/dated.txt').map((r) => r.headers['if-modified-since'])).toEqual([undefined, stamp]);
  });

  it('more than 5 redirects fail the run (TooManyRedirects); 5 are followed', async () => {
    const c = await fresh();
    feed.list('/end.txt', ips(1));
    for (let hop = 0; hop < 6; hop++) {
      const next = hop === 5 ? '/end.txt' : `/hop${hop + 1}`;
      feed.routes.set(`/hop${hop}`, (_request, response) => void response.writeHead(302, { location: next }).end());
    }
    const far = await source(c, '/hop0');
    expect(await run(far)).toMatchObject({ outcome: 'failed', error: { code: 'TooManyRedirects' } });
    expect(feed.hits('/end.txt')).toBe(0);
    const near = await source(c, '/hop1');
    expect(await run(near)).toMatchObject({ outcome: 'ok', added: 1 });
  });

  it('delta mode for text, csv and ndjson: a body only adds, nothing ends by absence', async () => {
    const c = await fresh();
    const kinds = [
      { path: '/delta.txt', extra: {}, body: (n: number[]) => ips(...n) },
      { path: '/delta.csv', extra: { kind: 'csv', valueColumn: 'ip' }, body: (n: number[]) => `ip\n${ips(...n)}` },
      {
        path: '/delta.json',
        extra: { kind: 'ndjson', valueField: 'ip' },
        body: (n: number[]) => n.map((i) => JSON.stringify({ ip: `198.51.100.${i}` })).join('\n'),
      },
    ];
    for (const { path, extra, body } of kinds) {
      feed.list(path, body([1, 2]));
      const name = await source(c, path, { ...extra, mode: 'delta' });
      expect(await run(name)).toMatchObject({ outcome: 'ok' });
      feed.list(path, body([3]));
      expect(await run(name)).toMatchObject({ outcome: 'ok', withdrawn: 0 });
      expect((await claims(name)).map((claim) => claim.value)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3']);
    }
    expect(await keysOf(c)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3']);
  });
});
