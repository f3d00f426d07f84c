import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { listAll } from '../intel/objects.helpers.js';
import { ROOT, TAXII, taxiiClient } from '../support/clients/taxii.js';
import { sourceFactory } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection } from '../taxii/taxii-support.js';
import type { FeedServer } from './feed-server.js';
import { runNow, withSourceApp } from './sources.helpers.js';

const ip = (n: number) => `203.0.113.${n}`;
const ipForm = (n: number) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value: ip(n) }], context: { n } });

/**
 * The feed kinds of sources (extensions §13): `taxii21` against a second instance of this service as the
 * upstream (its own database and server, paged by a small `pageSize`), and `misp` against a feed folder
 * the test writes, served by Node http behind an `Auth-Key`.
 */
describe('source runs of the feed kinds', () => {
  let t: TestApp;
  let upstream: TestApp;
  let feed: FeedServer;

  beforeAll(async () => {
    upstream = await createTestApp();
  });
  withSourceApp((app) => ({ t, feed } = app));
  afterAll(async () => {
    await upstream.close();
  });

  const { create: source } = sourceFactory(() => t, 'feed');
  const run = (name: string) => runNow(t, name);
  const keysOf = async (collection: string) => (await listAll(t, collection, 100)).objects.map((object) => object.keys[0].value).sort();
  const changeCount = async (collection: string) =>
    Number(
      (await t.db.query(`SELECT count(*) FROM intel_change c JOIN intel_collection k ON k.id = c.collection_id WHERE k.name = $1`, [collection])).rows[0].count,
    );
  const feedState = async (name: string) =>
    (await t.db.query(`SELECT feed_state FROM sources_source WHERE name = $1`, [name])).rows[0].feed_state as Record<string, unknown> | null;

  describe('taxii21', () => {
    let collectionID: string;
    /** In front of the upstream: forwards every request, recording its path and query, so a test sees the pages asked. */
    let proxy: Server;
    let proxied: string;
    const asked: URL[] = [];
    const collections = { count: 0 };
    const downstream = async () => {
      const name = `taxii-down-${++collections.count}`;
      await createCollection(t, name);
      return name;
    };

    beforeAll(async () => {
      collectionID = await createCollection(upstream, 'partner');
      const batch = await upstream.intel.batch('partner', [1, 2, 3, 4, 5, 6, 7].map(ipForm));
      expect(batch.status).toBe(200);
      proxy = createServer((request, response) => {
        asked.push(new URL(request.url ?? '/', 'http://proxy'));
        const headers = { accept: request.headers.accept ?? '', authorization: request.headers.authorization ?? '' };
        fetch(`${upstream.url}${request.url}`, { headers }).then(
          async (answer) => {
            const passed = ['content-type', 'x-taxii-date-added-first', 'x-taxii-date-added-last'].filter((name) => answer.headers.has(name));
            response.writeHead(answer.status, Object.fromEntries(passed.map((name) => [name, answer.headers.get(name)!]))).end(await answer.text());
          },
          () => void response.writeHead(502).end(),
        );
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    });

    it('drains every page in one run, keeps the raw watermark, then reads only what was added after it, deletions upstream ending claims', async () => {
      const c = await downstream();
      const name = await source({
        collection: c,
        kind: 'taxii21',
        url: `${proxied}${ROOT}/`,
        collectionID,
        pageSize: 2,
        basicAuth: { username: 'partner', password: upstream.adminKey },
        context: { feed: 'partner' },
      });
      // Seven indicators with their observables over pages of two: one run takes them all, page after page.
      const first = await run(name);
      const pages = asked.filter((url) => url.pathname.endsWith('/objects/'));
      expect(pages.length).toBeGreaterThanOrEqual(7);
      expect(pages.every((url) => url.searchParams.get('limit') === '2' && !url.searchParams.has('added_after'))).toBe(true);
      expect(pages.slice(1).every((url) => url.searchParams.has('next'))).toBe(true);
      expect(first).toMatchObject({ outcome: 'ok', httpStatus: 200, items: 7, added: 7, withdrawn: 0, rejected: 0, error: null });
      expect(await keysOf(c)).toEqual([1, 2, 3, 4, 5, 6, 7].map(ip).sort());
      const [object] = (await listAll(t, c, 100)).objects.filter((o) => o.keys[0].value === ip(3));
      expect(object.context).toEqual({ feed: 'partner', n: 3 });
      // The watermark is the upstream's X-TAXII-Date-Added-Last as written, microseconds and all.
      const whole = await taxiiClient(upstream, upstream.adminKey).get(`${ROOT}/collections/${collectionID}/objects/`);
      const last = whole.headers['x-taxii-date-added-last'] as string;
      expect(last).toMatch(/\.\d{6}Z$/);
      expect(await feedState(name)).toEqual({ watermark: last });

      // Upstream: two deleted (revoked versions), one added.
      for (const n of [2, 5]) expect((await upstream.intel.remove('partner', 'IPAddress', ip(n))).status).toBe(204);
      expect((await upstream.intel.add('partner', ipForm(8))).status).toBe(204);
      asked.length = 0;
      const second = await run(name);
      // The second run starts from the watermark, verbatim.
      expect(asked[0].searchParams.get('added_after')).toBe(last);
      // Only the three versions after the watermark: the new indicator and the two revoked ones.
      expect(second).toMatchObject({ outcome: 'ok', items: 3, added: 1, updated: 0, withdrawn: 2, rejected: 0 });
      expect(await keysOf(c)).toEqual([1, 3, 4, 6, 7, 8].map(ip).sort());
      const removes = (
        await t.db.query(
          `SELECT object->'keys'->0->>'value' AS value, reason, source FROM intel_change WHERE operation = 'Remove' AND source = $1 ORDER BY id`,
          [name],
        )
      ).rows;
      expect(removes).toEqual([ip(2), ip(5)].map((value) => ({ value, reason: 'Withdrawn', source: name })));
      const claims = await t.sources.claims(name);
      expect((claims.body as { value: string }[]).map((claim) => claim.value).sort()).toEqual([1, 3, 4, 6, 7, 8].map(ip).sort());
      const moved = (await feedState(name))!.watermark as string;
      expect(moved > last).toBe(true);

      // Nothing after the watermark: notModified, nothing written, the watermark kept.
      const before = await changeCount(c);
      expect(await run(name)).toMatchObject({ outcome: 'notModified', httpStatus: 200, added: 0, withdrawn: 0 });
      expect(await changeCount(c)).toBe(before);
      expect(await feedState(name)).toEqual({ watermark: moved });
    });

    it('a dry run reads the whole collection and stores no watermark', async () => {
      const c = await downstream();
      const name = await source({
        collection: c,
        kind: 'taxii21',
        url: `${upstream.url}${ROOT}`,
        collectionID,
        pageSize: 3,
        basicAuth: { username: 'p', password: upstream.adminKey },
      });
      const dry = await t.sources.dryRun(name);
      expect(dry.status).toBe(200);
      expect(dry.body).toMatchObject({ added: 6, withdrawn: 0, rejected: 0, suspect: false });
      expect(await feedState(name)).toBeNull();
      expect(await keysOf(c)).toEqual([]);
    });

    /** A TAXII route of the feed server answering `pages[i]` to its i-th request (the last one again after them). */
    const addedAfter: (string | null)[] = [];
    function taxiiRoute(path: string, pages: { body: string; type?: string; last?: string }[]) {
      let served = 0;
      feed.routes.set(path, (request, response) => {
        addedAfter.push(new URL(request.url ?? '/', 'http://feed').searchParams.get('added_after'));
        const page = pages[Math.min(served++, pages.length - 1)];
        response
          .writeHead(200, { 'content-type': page.type ?? TAXII, ...(page.last !== undefined && { 'x-taxii-date-added-last': page.last }) })
          .end(page.body);
      });
    }
    const indicator = (n: number) => ({
      type: 'indicator',
      spec_version: '2.1',
      id: `indicator--00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      pattern_type: 'stix',
      pattern: `[ipv4-addr:value = '${ip(n)}']`,
      valid_from: '2026-01-01T00:00:00Z',
    });
    const envelope = (body: Record<string, unknown>) => JSON.stringify(body);

    it('a server that pages in a circle (the same next again, or more without next and a watermark that stays) fails the run with nothing written', async () => {
      for (const [path, pages] of [
        [
          '/loop-next/collections/c1/objects/',
          [{ body: envelope({ more: true, next: 'again', objects: [indicator(20)] }), last: '2026-01-01T00:00:00.000001Z' }],
        ],
        ['/loop-time/collections/c1/objects/', [{ body: envelope({ more: true, objects: [indicator(21)] }), last: '2026-01-01T00:00:00.000001Z' }]],
      ] as const) {
        taxiiRoute(path, [...pages]);
        const c = await downstream();
        const name = await source({ collection: c, kind: 'taxii21', url: feed.url(path.replace('collections/c1/objects/', '')), collectionID: 'c1' });
        const failed = await run(name);
        expect(failed).toMatchObject({ outcome: 'failed', added: 0, error: { code: 'PagingLoop', message: expect.stringMatching(/circle|does not advance/) } });
        expect(await changeCount(c)).toBe(0);
        expect(await feedState(name)).toBeNull();
      }
    });

    it('an HTML error page or JSON that is not TAXII fails the run with a clear error, nothing changed, the watermark kept', async () => {
      const path = '/partner/collections/c1/objects/';
      taxiiRoute(path, [{ body: envelope({ more: false, objects: [indicator(30)] }), last: '2026-02-01T10:00:00.123456Z' }]);
      const c = await downstream();
      const name = await source({ collection: c, kind: 'taxii21', url: feed.url('/partner'), collectionID: 'c1' });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 1 });
      expect(await feedState(name)).toEqual({ watermark: '2026-02-01T10:00:00.123456Z' });
      const asked = () => feed.requests.filter((request) => request.path === path).length;
      const bad: [{ body: string; type?: string }, RegExp][] = [
        [{ body: '<html><body>502 Bad Gateway</body></html>', type: 'text/html' }, /answered text\/html, not a TAXII 2.1 envelope/],
        [
          { body: envelope({ title: 'hello', items: [indicator(31)] }), type: 'application/json' },
          /JSON but not a TAXII 2.1 envelope: it has a member "title"/,
        ],
        [{ body: envelope({ more: false, objects: 'none' }) }, /"objects" is not an array of objects/],
        [{ body: '{"more": false, "objects": [' }, /not valid JSON/],
      ];
      for (const [page, message] of bad) {
        const requests = asked();
        taxiiRoute(path, [page]);
        const failed = await run(name);
        expect(failed).toMatchObject({
          outcome: 'failed',
          added: 0,
          withdrawn: 0,
          error: { code: expect.stringMatching(/^Not(Taxii|Json)$/), message: expect.stringMatching(message) },
        });
        expect(asked()).toBe(requests + 1);
        // The run asked for what came after the watermark, as the server wrote it.
        expect(addedAfter.at(-1)).toBe('2026-02-01T10:00:00.123456Z');
        expect(await keysOf(c)).toEqual([ip(30)]);
        expect(await changeCount(c)).toBe(1);
        expect(await feedState(name)).toEqual({ watermark: '2026-02-01T10:00:00.123456Z' });
      }
      expect(feed.requests.filter((request) => request.path === path).at(-1)!.headers.accept).toBe(TAXII);
    });
  });

  describe('misp', () => {
    const AUTH_KEY = 'misp-auth-key-0123456789';
    let folder: string;
    let server: Server;
    let base: string;
    const hits: string[] = [];
    const keys: (string | undefined)[] = [];

    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'misp-feed-'));
      // A MISP feed as CIRCL publishes it: static files of a folder, here behind an Auth-Key, manifest with an ETag.
      server = createServer((request, response) => {
        const file = basename((request.url ?? '/').split('?')[0]);
        hits.push(file);
        keys.push(request.headers['auth-key'] as string | undefined);
        if (request.headers['auth-key'] !== AUTH_KEY) return void response.writeHead(403).end('forbidden');
        readFile(join(folder, file)).then(
          (body) => {
            const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
            if (request.headers['if-none-match'] === etag) return void response.writeHead(304).end();
            response.writeHead(200, { 'content-type': 'application/json', etag }).end(body);
          },
          () => void response.writeHead(404).end('not found'),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feeds/circl/`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(folder, { recursive: true, force: true });
    });

    const A = '5f0cfd67-1b2c-4d3e-8f40-aaaaaaaaaaaa';
    const B = '5f0cfd67-1b2c-4d3e-8f40-bbbbbbbbbbbb';
    const C = '5f0cfd67-1b2c-4d3e-8f40-cccccccccccc';
    const SHA256 = 'a'.repeat(64);
    const MD5 = 'b'.repeat(32);
    const attribute = (type: string, value: string, extra: Record<string, unknown> = {}) => ({
      type,
      value,
      to_ids: true,
      category: 'Network activity',
      ...extra,
    });
    async function publish(events: Record<string, { timestamp: string; Attribute?: unknown[]; Object?: unknown[] }>): Promise<void> {
      const manifest = Object.fromEntries(Object.entries(events).map(([uuid, event]) => [uuid, { timestamp: event.timestamp, info: `event ${uuid}` }]));
      await writeFile(join(folder, 'manifest.json'), JSON.stringify(manifest));
      for (const [uuid, event] of Object.entries(events)) {
        await writeFile(join(folder, `${uuid}.json`), JSON.stringify({ Event: { uuid, info: `event ${uuid}`, ...event } }));
      }
    }

    it('reads the manifest and the events whose timestamp moved, with the Auth-Key on every request; deleted and dropped attributes end their claims', async () => {
      const c = 'misp-down';
      await createCollection(t, c);
      const eventA = {
        timestamp: '1700000000',
        Attribute: [
          attribute('ip-dst', ip(1)),
          attribute('domain', 'evil-misp.example'),
          attribute('ip-src', ip(9), { to_ids: false }),
          attribute('email-src', 'a@evil-misp.example'),
        ],
      };
      const eventB = {
        timestamp: '1700000100',
        Object: [{ name: 'file', Attribute: [attribute('sha256', SHA256), attribute('filename|md5', `dropper.exe|${MD5}`)] }],
      };
      await publish({ [A]: eventA, [B]: eventB });
      const name = await source({ collection: c, kind: 'misp', url: base, headers: { 'Auth-Key': AUTH_KEY }, maxRemovalRatio: 1, context: { feed: 'circl' } });
      // The view names the header, never its value.
      const view = await t.sources.source(name);
      expect(view.body).toMatchObject({ kind: 'misp', mode: 'delta', headers: ['Auth-Key'], toIdsOnly: true });
      expect(JSON.stringify(view.body)).not.toContain(AUTH_KEY);

      hits.length = 0;
      const first = await run(name);
      expect(first).toMatchObject({ outcome: 'ok', httpStatus: 200, added: 4, withdrawn: 0, rejected: 0 });
      expect(await keysOf(c)).toEqual([MD5, SHA256, ip(1), 'evil-misp.example'].sort());
      expect(hits.sort()).toEqual(['manifest.json', `${A}.json`, `${B}.json`].sort());
      expect(keys.every((key) => key === AUTH_KEY)).toBe(true);

      // The manifest unchanged: a 304, no event file fetched.
      hits.length = 0;
      expect(await run(name)).toMatchObject({ outcome: 'notModified', httpStatus: 304, added: 0 });
      expect(hits).toEqual(['manifest.json']);

      // Event A changes: its domain is gone and its address marked deleted, but new event C gives that address
      // too; a URL is added. B is not fetched again.
      hits.length = 0;
      await publish({
        [A]: { timestamp: '1700000200', Attribute: [attribute('ip-dst', ip(1), { deleted: true }), attribute('url', 'http://evil-misp.example/gate.php')] },
        [B]: eventB,
        [C]: { timestamp: '1700000300', Attribute: [attribute('ip-dst', ip(1))] },
      });
      const third = await run(name);
      expect(third).toMatchObject({ outcome: 'ok', added: 1, withdrawn: 1 });
      expect(hits.sort()).toEqual(['manifest.json', `${A}.json`, `${C}.json`].sort());
      expect(await keysOf(c)).toEqual([MD5, SHA256, ip(1), 'http://evil-misp.example/gate.php'].sort());

      // Event B leaves the feed: its keys lose their claim.
      await publish({
        [A]: { timestamp: '1700000200', Attribute: [attribute('ip-dst', ip(1), { deleted: true }), attribute('url', 'http://evil-misp.example/gate.php')] },
        [C]: { timestamp: '1700000300', Attribute: [attribute('ip-dst', ip(1))] },
      });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 0, withdrawn: 2 });
      expect(await keysOf(c)).toEqual([ip(1), 'http://evil-misp.example/gate.php'].sort());
      const removes = (
        await t.db.query(`SELECT reason, count(*)::int AS n FROM intel_change WHERE operation = 'Remove' AND source = $1 GROUP BY reason`, [name])
      ).rows;
      expect(removes).toEqual([{ reason: 'Withdrawn', n: 3 }]);
    });

    it('a suspect run keeps the event state of the last success and no ETag: the next run reads the manifest again and, with maxRemovalRatio raised, ends the claims', async () => {
      const c = 'misp-suspect';
      await createCollection(t, c);
      const eventA = { timestamp: '1700000000', Attribute: [60, 61, 62, 63].map((n) => attribute('ip-dst', ip(n))) };
      const eventB = { timestamp: '1700000000', Attribute: [attribute('ip-dst', ip(64))] };
      await publish({ [A]: eventA, [B]: eventB });
      const name = await source({ collection: c, kind: 'misp', url: base, headers: { 'Auth-Key': AUTH_KEY } });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 5 });
      const state = await feedState(name);
      // Event A leaves the feed: 4 of 5 claims would end.
      await publish({ [B]: eventB });
      expect(await run(name)).toMatchObject({ outcome: 'suspect', withdrawn: 0 });
      expect(await feedState(name)).toEqual(state);
      expect((await t.db.query(`SELECT etag FROM sources_source WHERE name = $1`, [name])).rows[0].etag).toBeNull();
      // The same manifest again is read again (no 304) and weighed again.
      expect(await run(name)).toMatchObject({ outcome: 'suspect', httpStatus: 200, withdrawn: 0 });
      const view = await t.sources.source(name);
      expect((await t.sources.update(name, { maxRemovalRatio: 1 }, view.headers.etag as string)).status).toBe(204);
      expect(await run(name)).toMatchObject({ outcome: 'ok', withdrawn: 4 });
      expect(await keysOf(c)).toEqual([ip(64)]);
    });

    it('without the Auth-Key the run fails with the status, and a manifest that is not JSON fails it with nothing written', async () => {
      const c = 'misp-refused';
      await createCollection(t, c);
      await publish({ [A]: { timestamp: '1', Attribute: [attribute('ip-dst', ip(50))] } });
      const name = await source({ collection: c, kind: 'misp', url: base.slice(0, -1) });
      expect(await run(name)).toMatchObject({ outcome: 'failed', httpStatus: 403, error: { code: 'HttpStatus' } });
      const patched = await t.sources.source(name);
      const updated = await t.sources.update(name, { headers: { 'Auth-Key': AUTH_KEY } }, patched.headers.etag as string);
      expect(updated.status).toBe(204);
      await writeFile(join(folder, 'manifest.json'), '<html>maintenance</html>');
      expect(await run(name)).toMatchObject({ outcome: 'failed', error: { code: 'NotJson', message: expect.stringMatching(/^manifest\.json: /) } });
      expect(await changeCount(c)).toBe(0);
      expect(await feedState(name)).toBeNull();
    });
  });
});
