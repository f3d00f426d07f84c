import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { createCollection } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { asText, patchList, sortedLines } from './warninglists.helpers.js';

const INTEL = 2;
const TAXII = { Accept: 'application/taxii+json;version=2.1' };

const object = (type: string, keys: [string, string][]) => ({ type, keys: keys.map(([keyType, value]) => ({ type: keyType, value })), context: {} });

/** Where lists act (extensions §15): lookups annotate; exports and TAXII leave `excludeFromExport` objects out. */
describe('warninglists on the read paths', () => {
  let t: TestApp;
  let reader: string;
  const taxii = (path: string) => t.intel.as(reader).get(path).set(TAXII);

  const exportOf = (query: string, headers: Record<string, string> = {}) => asText(t.intel.as(reader).export('feed', `?${query}`).set(headers));

  beforeAll(async () => {
    t = await createTestApp();
    reader = (await createKey(t, { permissions: [{ resource: INTEL, actions: ['Read', 'ReadChildren'] }] })).key;
    await createCollection(t, 'feed');
    const written = await t.intel.batch('feed', [
      object('IPAddress', [['IPAddress', '8.8.8.8']]),
      object('IPAddress', [['IPAddress', '10.1.2.3']]),
      object('IPNetwork', [['IPNetwork', '10.0.0.0/8']]),
      object('URL', [['URL', 'http://192.168.1.1/admin']]),
      object('IPAddress', [['IPAddress', '203.0.113.5']]),
      object('DomainName', [['DomainName', 'evil.example']]),
      object('DomainName', [['DomainName', 'www.google.com']]),
    ]);
    expect(written.body.added).toBe(7);
    await t.warninglists.create({ name: 'google', kind: 'hostname', entries: ['google.com'] }).expect(201);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('lookup: warnings per key, found or not, from every enabled list', async () => {
    const response = await t.intel
      .as(reader)
      .lookup({
        keys: [
          { type: 'IPAddress', value: '8.8.8.8' },
          { type: 'DomainName', value: 'Mail.Google.com.' },
          { type: 'DomainName', value: 'evil.example' },
          { type: 'IPAddress', value: 'not an address' },
        ],
      })
      .expect(200);
    const [resolver, google, evil, bad] = response.body as { matches: unknown[]; warnings: { list: string; match: string }[] }[];
    expect(resolver.matches).toHaveLength(1);
    expect(resolver.warnings).toEqual([{ list: 'public-dns-resolvers', entry: '8.8.8.8/32', action: 'excludeFromExport', match: 'contained' }]);
    expect(google.matches).toEqual([]);
    expect(google.warnings).toEqual([{ list: 'google', entry: 'google.com', action: 'annotate', match: 'subdomain' }]);
    expect(evil.warnings).toEqual([]);
    expect(bad.warnings).toEqual([]);
  });

  it('exports leave out objects on excludeFromExport lists in every format, say how many, and keep them with warninglists=ignore', async () => {
    const txt = await exportOf('format=txt');
    expect(txt.status).toBe(200);
    expect(txt.headers['x-excluded-count']).toBe('4');
    // The built-ins keep 8.8.8.8 and 10.0.0.0/8 (and what is inside) out; an annotate list changes nothing.
    expect(sortedLines(txt.body as string)).toEqual(['203.0.113.5', 'evil.example', 'www.google.com']);
    const csv = await exportOf('format=csv');
    expect(csv.headers['x-excluded-count']).toBe('4');
    const rows = parse(csv.body as string, { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => row['key value']).sort()).toEqual(['203.0.113.5', 'evil.example', 'www.google.com']);
    const ndjson = await exportOf('format=ndjson');
    expect(
      sortedLines(ndjson.body as string)
        .map((line) => JSON.parse(line).keys[0].value)
        .sort(),
    ).toEqual(['203.0.113.5', 'evil.example', 'www.google.com']);
    const stix = await exportOf('format=stix');
    expect(stix.headers['x-excluded-count']).toBe('4');
    const bundle = JSON.parse(stix.body as string) as { objects: { type: string; value?: string }[] };
    expect(
      bundle.objects
        .filter((o) => o.value !== undefined)
        .map((o) => o.value)
        .sort(),
    ).toEqual(['203.0.113.5', 'evil.example', 'www.google.com']);
    // Counted are the objects this export would have held: of the four listed, the two with an IPAddress key.
    const typed = await exportOf('format=txt&keyType=IPAddress');
    expect(sortedLines(typed.body as string)).toEqual(['203.0.113.5']);
    expect(typed.headers['x-excluded-count']).toBe('2');
    // Filtered by sightings, only the listed objects sighted count (8.8.8.8, not the other three): on HEAD as on GET.
    await t.sightings
      .record([
        { type: 'IPAddress', value: '8.8.8.8' },
        { type: 'DomainName', value: 'evil.example' },
      ])
      .expect(200);
    const since = `sightedSince=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`;
    expect((await t.intel.as(reader).head(`/intel/collections/feed/export?format=txt&${since}`).expect(200)).headers['x-excluded-count']).toBe('1');
    const sighted = await exportOf(`format=txt&${since}`);
    expect(sortedLines(sighted.body as string)).toEqual(['evil.example']);
    expect(sighted.headers['x-excluded-count']).toBe('1');

    const ignored = await exportOf('format=txt&warninglists=ignore');
    expect(ignored.headers['x-excluded-count']).toBe('0');
    expect(sortedLines(ignored.body as string)).toEqual([
      '10.0.0.0/8',
      '10.1.2.3',
      '203.0.113.5',
      '8.8.8.8',
      'evil.example',
      'http://192.168.1.1/admin',
      'www.google.com',
    ]);
    expect(ignored.headers.etag).not.toBe(txt.headers.etag);
    expectError(await t.intel.as(reader).export('feed', '?format=txt&warninglists=maybe'), 'InvalidQueryArgument');
  });

  it('HEAD and 304 answers carry the X-Excluded-Count of the same GET, also on an instance that never answered that tag', async () => {
    const url = '/intel/collections/feed/export?format=csv&keyType=URL';
    // No GET of this query yet: the HEAD counts, as the GET does, only the one listed object with a URL key.
    const head = await t.intel.as(reader).head(url).expect(200);
    expect(head.headers['x-excluded-count']).toBe('1');
    const get = await exportOf('format=csv&keyType=URL');
    expect(get.headers.etag).toBe(head.headers.etag);
    expect(get.headers['x-excluded-count']).toBe('1');
    const notModified = await exportOf('format=csv&keyType=URL', { 'If-None-Match': get.headers.etag });
    expect(notModified.status).toBe(304);
    expect(notModified.headers['x-excluded-count']).toBe('1');
    const ignored = await t.intel.as(reader).head(`${url}&warninglists=ignore`).expect(200);
    expect(ignored.headers['x-excluded-count']).toBe('0');
    const ignoredAgain = await exportOf('format=csv&keyType=URL&warninglists=ignore', { 'If-None-Match': ignored.headers.etag });
    expect(ignoredAgain.status).toBe(304);
    expect(ignoredAgain.headers['x-excluded-count']).toBe('0');

    const other = await createTestApp({}, t);
    try {
      const there = await other.intel.as(reader).get(url).set({ 'If-None-Match': get.headers.etag });
      expect(there.status).toBe(304);
      expect(there.headers.etag).toBe(get.headers.etag);
      expect(there.headers['x-excluded-count']).toBe('1');
    } finally {
      await other.close();
    }
  });

  it("a list's change moves the export tag (no stale 304) and acts at once; a list made excluding leaves its objects out", async () => {
    const before = await exportOf('format=txt');
    expect((await exportOf('format=txt', { 'If-None-Match': before.headers.etag })).status).toBe(304);
    await patchList(t, 'public-dns-resolvers', { action: 'annotate' });
    const after = await exportOf('format=txt', { 'If-None-Match': before.headers.etag });
    expect(after.status).toBe(200);
    expect(sortedLines(after.body as string)).toContain('8.8.8.8');
    expect(after.headers['x-excluded-count']).toBe('3');
    await patchList(t, 'google', { action: 'excludeFromExport' });
    const google = await exportOf('format=txt');
    expect(sortedLines(google.body as string)).not.toContain('www.google.com');
    expect(google.headers['x-excluded-count']).toBe('4');
    // HEAD gives the tag of the same GET.
    expect((await t.intel.as(reader).head('/intel/collections/feed/export?format=txt')).headers.etag).toBe(google.headers.etag);
    await patchList(t, 'google', { enabled: false });
    await patchList(t, 'public-dns-resolvers', { action: 'excludeFromExport' });
    expect(sortedLines((await exportOf('format=txt')).body as string)).toEqual(['203.0.113.5', 'evil.example', 'www.google.com']);
  });

  it('TAXII: objects, manifest and versions leave excluded objects out (X-Excluded-Count); one such object is 404', async () => {
    const collections = (await taxii('/taxii2/api/collections/')).body as { collections: { id: string; title: string }[] };
    const id = collections.collections.find((c) => c.title === 'feed')!.id;
    const page = await taxii(`/taxii2/api/collections/${id}/objects/?limit=1000`).expect(200);
    const objects = page.body.objects as { id: string; type: string; value?: string; pattern?: string }[];
    expect(
      objects
        .filter((o) => o.value !== undefined)
        .map((o) => o.value)
        .sort(),
    ).toEqual(['203.0.113.5', 'evil.example', 'www.google.com']);
    expect(objects.some((o) => o.pattern?.includes('8.8.8.8'))).toBe(false);
    // Four stored objects left out (each an indicator and an observable, counted once).
    expect(page.headers['x-excluded-count']).toBe('4');
    const manifest = await taxii(`/taxii2/api/collections/${id}/manifest/?limit=1000`).expect(200);
    expect(manifest.body.objects).toHaveLength(objects.length);

    await patchList(t, 'public-dns-resolvers', { action: 'annotate' });
    const unlisted = (await taxii(`/taxii2/api/collections/${id}/objects/?limit=1000`)).body.objects as { id: string; pattern?: string }[];
    const resolver = unlisted.find((o) => o.pattern?.includes("'8.8.8.8'"))!;
    expect(resolver).toBeDefined();
    await taxii(`/taxii2/api/collections/${id}/objects/${resolver.id}/`).expect(200);
    await patchList(t, 'public-dns-resolvers', { action: 'excludeFromExport' });
    const gone = await taxii(`/taxii2/api/collections/${id}/objects/${resolver.id}/`);
    expect(gone.status).toBe(404);
    expect((await taxii(`/taxii2/api/collections/${id}/objects/${resolver.id}/versions/`)).status).toBe(404);
    // warninglists=ignore serves it, on the object route as on the pages.
    await taxii(`/taxii2/api/collections/${id}/objects/${resolver.id}/?warninglists=ignore`).expect(200);
    expect((await taxii(`/taxii2/api/collections/${id}/objects/?warninglists=sometimes`)).status).toBe(400);
  });

  it('TAXII paging by next alone loses and repeats nothing when listed objects fall on page boundaries; warninglists=ignore travels in next', async () => {
    await createCollection(t, 'paged');
    // Listed objects (built-ins) between, after one another, and last: every page size below puts some on a boundary.
    const values: [string, string][] = [
      ['DomainName', 'a.example'],
      ['IPAddress', '8.8.8.8'],
      ['DomainName', 'b.example'],
      ['IPAddress', '10.0.0.1'],
      ['IPAddress', '10.0.0.2'],
      ['DomainName', 'c.example'],
      ['DomainName', 'd.example'],
      ['IPAddress', '192.168.0.1'],
      ['IPAddress', '1.1.1.1'],
      ['DomainName', 'e.example'],
      ['IPAddress', '127.0.0.1'],
    ];
    const written = await t.intel.batch(
      'paged',
      values.map(([type, value]) => object(type, [[type, value]])),
    );
    expect(written.body.added).toBe(values.length);
    const collections = (await taxii('/taxii2/api/collections/')).body as { collections: { id: string; title: string }[] };
    const id = collections.collections.find((c) => c.title === 'paged')!.id;
    type Page = { more: boolean; next?: string; objects?: { id: string }[] };
    /** Every page of a walk, each request after the first sending only `next`. */
    const walk = async (route: string, query: string) => {
      const ids: string[] = [];
      let excluded = 0;
      let pages = 0;
      for (let url = `/taxii2/api/collections/${id}/${route}/?${query}`; ; pages++) {
        const response = await taxii(url).expect(200);
        const page = response.body as Page;
        ids.push(...(page.objects ?? []).map((o) => o.id));
        excluded += Number(response.headers['x-excluded-count']);
        expect(page.next !== undefined).toBe(page.more);
        if (!page.more) return { ids, excluded, pages: pages + 1 };
        url = `/taxii2/api/collections/${id}/${route}/?next=${encodeURIComponent(page.next!)}`;
      }
    };
    const whole = await walk('objects', 'limit=1000');
    // Two constant objects and five objects of two STIX objects each; six listed stored objects walked past.
    expect(whole.ids).toHaveLength(12);
    expect(whole.excluded).toBe(6);
    for (const limit of [1, 2, 3, 4, 5]) {
      for (const route of ['objects', 'manifest']) {
        const paged = await walk(route, `limit=${limit}`);
        expect({ limit, route, ids: paged.ids, excluded: paged.excluded }).toEqual({ limit, route, ids: whole.ids, excluded: whole.excluded });
        // No empty last page after `more: true`: listed objects after a full page are walked past with it.
        expect(paged.pages).toBe(Math.ceil(whole.ids.length / limit));
      }
    }
    const ignored = await walk('objects', 'limit=1000&warninglists=ignore');
    expect(ignored.ids).toHaveLength(24);
    expect(ignored.excluded).toBe(0);
    for (const route of ['objects', 'manifest']) {
      const paged = await walk(route, 'limit=5&warninglists=ignore');
      expect(paged.ids).toEqual(ignored.ids);
      expect(paged.excluded).toBe(0);
    }
  });
});
