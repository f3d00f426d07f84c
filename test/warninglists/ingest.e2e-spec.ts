import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection } from '../intel/objects.helpers.js';
import { FeedServer } from '../sources/feed-server.js';
import { runNow } from '../sources/sources.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const TAXII_POST = { Accept: 'application/taxii+json;version=2.1', 'Content-Type': 'application/taxii+json;version=2.1' };
const TAXII_GET = { Accept: TAXII_POST.Accept };

/** `rejectOnIngest` (extensions §15): refused on every write path, per item on the batch paths, the rest written. */
describe('warninglists on the write paths', () => {
  let t: TestApp;
  let feed: FeedServer;
  const domain = (value: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });
  /** 200 when the domain is stored in the collection, 404 when not (through the lookup). */
  const stored = async (value: string) =>
    (await t.intel.lookup({ keys: [{ type: 'DomainName', value }] }).expect(200)).body[0].matches.length > 0 ? 200 : 404;

  beforeAll(async () => {
    // Sources may fetch from the feed server at 127.0.0.2 (the default denies the loopback); no scheduled runs.
    t = await createTestApp({ SOURCE_POLL_SECONDS: '3600', SOURCE_DENY_NETWORKS: '169.254.0.0/16,127.0.0.1/32,::1/128' });
    feed = await new FeedServer().start();
    await createCollection(t, 'feed');
    // Stored before the list exists: a later write of it is refused too.
    await t.intel.add('feed', domain('old.blocked.example')).expect(204);
    await t.warninglists.create({ name: 'blocked', kind: 'hostname', action: 'rejectOnIngest', entries: ['blocked.example', 'blocked.net'] }).expect(201);
    await t.warninglists.create({ name: 'noted', kind: 'hostname', action: 'excludeFromExport', entries: ['noted.example'] }).expect(201);
  });

  afterAll(async () => {
    await t?.close();
    await feed?.stop();
  });

  it('a rejectOnIngest list does what the weaker actions do: a lookup is annotated, exports and TAXII pages leave its objects out', async () => {
    // old.blocked.example was stored before the list: the one object of the collection so far.
    const [found] = (await t.intel.lookup({ keys: [{ type: 'DomainName', value: 'old.blocked.example' }] }).expect(200)).body;
    expect(found.matches).toHaveLength(1);
    expect(found.warnings).toEqual([{ list: 'blocked', entry: 'blocked.example', action: 'rejectOnIngest', match: 'subdomain' }]);

    const exported = await t.intel.export('feed', '?format=txt').expect(200);
    expect(exported.text).toBe('');
    expect(exported.headers['x-excluded-count']).toBe('1');
    const ignored = await t.intel.export('feed', '?format=txt&warninglists=ignore').expect(200);
    expect(ignored.text.trim()).toBe('old.blocked.example');

    const collections = (await t.intel.get('/taxii2/api/collections/').set(TAXII_GET)).body as { collections: { id: string; title: string }[] };
    const id = collections.collections.find((c) => c.title === 'feed')!.id;
    const valuesOf = (page: { objects?: { value?: string }[] }) => (page.objects ?? []).flatMap((o) => (o.value === undefined ? [] : [o.value]));
    const page = await t.intel.get(`/taxii2/api/collections/${id}/objects/`).set(TAXII_GET).expect(200);
    expect(valuesOf(page.body)).toEqual([]);
    expect(page.headers['x-excluded-count']).toBe('1');
    const all = await t.intel.get(`/taxii2/api/collections/${id}/objects/?warninglists=ignore`).set(TAXII_GET).expect(200);
    expect(valuesOf(all.body)).toEqual(['old.blocked.example']);
  });

  it('a single add: 422 Warninglisted naming the list, also for an object stored before the list; weaker actions write', async () => {
    const refused = await t.intel.add('feed', domain('www.Blocked.example'));
    expectError(refused, 'Warninglisted');
    expect(refused.body.details).toEqual({ warning: { list: 'blocked', entry: 'blocked.example', action: 'rejectOnIngest', match: 'subdomain' } });
    expect(refused.body.message).toContain('blocked');
    expectError(await t.intel.add('feed', domain('old.blocked.example')), 'Warninglisted');
    await t.intel.add('feed', domain('a.noted.example')).expect(204);
    expect(await stored('www.blocked.example')).toBe(404);
  });

  it('a batch: the listed items fail, the rest are written; an atomic batch with one is rejected whole', async () => {
    const response = await t.intel.batch('feed', [domain('one.example'), domain('x.blocked.example'), domain('two.example')]).expect(200);
    expect(response.body).toMatchObject({ added: 2, failed: 1 });
    expect(response.body.items[1]).toMatchObject({ index: 1, status: 'Failed', error: { code: 'Warninglisted' } });
    expect(await stored('two.example')).toBe(200);
    expect(await stored('x.blocked.example')).toBe(404);
    const atomic = await t.intel.post('/intel/collections/feed/objects/batch?atomic=true', [domain('three.example'), domain('y.blocked.example')]);
    expectError(atomic, 'BatchRejected');
    expect(await stored('three.example')).toBe(404);
  });

  it('imports and TAXII writes go through the batch path: per item', async () => {
    const imported = await t.intel
      .post('/intel/collections/feed/import?format=text')
      .set('Content-Type', 'text/plain')
      .send('seen at evil-import.net and z.blocked[.]net');
    expect(imported.status).toBe(200);
    expect(imported.body.report).toMatchObject({ added: 1, failed: 1 });
    expect(await stored('evil-import.net')).toBe(200);
    expect(await stored('z.blocked.net')).toBe(404);

    const collections = (await t.intel.get('/taxii2/api/collections/').set({ Accept: TAXII_POST.Accept })).body as {
      collections: { id: string; title: string }[];
    };
    const id = collections.collections.find((c) => c.title === 'feed')!.id;
    const envelope = {
      objects: [
        { type: 'domain-name', spec_version: '2.1', id: 'domain-name--5b4f3a52-8c5b-5a8e-9d0b-8e8f3f8a1c21', value: 'taxii.blocked.example' },
        { type: 'domain-name', spec_version: '2.1', id: 'domain-name--5b4f3a52-8c5b-5a8e-9d0b-8e8f3f8a1c22', value: 'taxii-ok.example' },
      ],
    };
    const status = await t.intel.post(`/taxii2/api/collections/${id}/objects/`).set(TAXII_POST).send(JSON.stringify(envelope)).expect(202);
    expect(status.body).toMatchObject({ success_count: 1, failure_count: 1 });
    expect(status.body.failures[0].message).toContain('blocked');
    expect(await stored('taxii-ok.example')).toBe(200);
    expect(await stored('taxii.blocked.example')).toBe(404);
  });

  it("a source run: the listed item is rejected (in the run's rejections, with the list), the rest written", async () => {
    await createCollection(t, 'sourced');
    feed.list('/feed.txt', 'fine-one.net\nx.blocked.net\n198.51.100.7\n');
    await t.sources.create({ name: 'listed-feed', collection: 'sourced', kind: 'text', url: feed.url('/feed.txt', '127.0.0.2') }).expect(201);
    const run = await runNow(t, 'listed-feed');
    expect(run).toMatchObject({ outcome: 'ok', items: 3, added: 2, rejected: 1 });
    expect(run.rejections).toEqual([{ line: 2, value: 'x.blocked.net', reason: expect.stringContaining('warninglist blocked') }]);
    const listed = await t.intel.export('sourced', '?format=txt&warninglists=ignore').expect(200);
    expect(
      listed.text
        .split('\n')
        .filter((line) => line !== '')
        .sort(),
    ).toEqual(['198.51.100.7', 'fine-one.net']);
    // The same body again: unchanged, and its items are still checked, so the refusal is listed again.
    const again = await runNow(t, 'listed-feed');
    expect(again).toMatchObject({ outcome: 'unchanged', items: 3, added: 0, rejected: 1 });
    expect(again.rejections).toEqual(run.rejections);
  });

  it('a list disabled or made weaker stops refusing at the next request', async () => {
    const tag = (await t.warninglists.list('blocked')).headers.etag as string;
    await t.warninglists.update('blocked', { action: 'annotate' }, tag).expect(204);
    await t.intel.add('feed', domain('www.blocked.example')).expect(204);
  });
});
