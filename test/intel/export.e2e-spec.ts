import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, listAll, md5, sha1, unscoredAll, type ObjectViewBody } from './objects.helpers.js';

/** Names the service refuses in a context, and `size`, which the test schema constrains. */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype', 'size']);

/** Context values as JSON carries them (no -0, no NUL: neither survives storage as written). */
const contextValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
);
const context = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).filter((name) => !RESERVED.has(name)),
  contextValue,
  { maxKeys: 4 },
);
const hex = (n: number, length: number) => n.toString(16).padStart(length, '0');

/** An object whose keys are made from its index `n` (so a set never has two objects sharing a key), of any type. */
function objectFor(n: number) {
  return fc
    .record({
      keys: fc.oneof(
        fc.constant([['DomainName', `Host-${n}.Example.`]]),
        fc.constant([['URL', `HTTPS://site-${n}.example/a b?q=${n}`]]),
        fc.constant([['IPAddress', `10.${(n >> 8) & 255}.${n & 255}.1`]]),
        fc.constant([['IPAddress', `2001:DB8::${hex(n, 1)}`]]),
        fc.constant([['IPNetwork', `10.${n & 255}.0.0/16`]]),
        fc.subarray(
          [
            ['MD5Hash', md5(n + 1)],
            ['SHA1Hash', sha1(n + 1)],
            ['SHA256Hash', hex(n + 1, 64)],
          ] as [string, string][],
          { minLength: 1 },
        ),
      ),
      context,
      expiresAt: fc.option(
        fc.integer({ min: 0, max: 10 ** 9 }).map((s) => new Date(Date.UTC(2090, 0, 1) + s * 1000 + (s % 1000)).toISOString()),
        { nil: undefined },
      ),
    })
    .map(({ keys, context, expiresAt }) => object(keys[0][0].endsWith('Hash') ? 'File' : keys[0][0], keys as [string, string][], context, expiresAt));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const INTEL = 2;

const object = (type: string, keys: [string, string][], context: Record<string, unknown> = {}, expiresAt?: string) => ({
  type,
  keys: keys.map(([keyType, value]) => ({ type: keyType, value })),
  context,
  ...(expiresAt && { expiresAt }),
});

/** Exports (extensions §9): every format against the listing, conditional GET, credentials, snapshots. */
describe('GET /intel/collections/{name}/export', () => {
  let t: TestApp;
  const lines = (text: string) => text.split('\n').slice(0, -1);

  beforeAll(async () => {
    t = await createTestApp();
    await createCollection(t, 'feed');
    const response = await t
      .http()
      .post('/intel/collections/feed/objects/batch')
      .set('X-Api-Key', t.adminKey)
      .send([
        object('DomainName', [['DomainName', 'Evil.Example.']], { source: 'report, "quoted"\r\nsecond line' }),
        object('URL', [['URL', 'HTTP://a.example/x']]),
        object('URL', [['URL', 'https://a.example/x']], { size: 2 }),
        object('URL', [['URL', 'https://b.example/login?u=1']]),
        object('IPAddress', [['IPAddress', '192.0.2.1']]),
        object('IPNetwork', [['IPNetwork', '2001:db8::/32']]),
        object(
          'File',
          [
            ['MD5Hash', md5(1)],
            ['SHA1Hash', sha1(1)],
          ],
          { size: 1, tags: ['x', 'y'] },
        ),
        object('DomainName', [['DomainName', 'other.example']], {}, '2099-01-01T00:00:00Z'),
      ]);
    expect(response.body.added).toBe(8);
  });
  afterAll(async () => {
    await t.close();
  });

  const exportOf = (query: string, collection = 'feed') =>
    t
      .http()
      .get(`/intel/collections/${collection}/export?${query}`)
      .set('X-Api-Key', t.adminKey)
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done(null, text));
      });

  /** Writes one DomainName object into `collection` (one write: POST …/objects, 204). */
  const addDomain = (collection: string, domain: string) =>
    t
      .http()
      .post(`/intel/collections/${collection}/objects`)
      .set('X-Api-Key', t.adminKey)
      .send(object('DomainName', [['DomainName', domain]]))
      .expect(204);
  /** A conditional GET of `path` on `app` with If-None-Match `tags`. */
  const getIfNoneMatch = (app: TestApp, path: string, tags: string) => app.http().get(path).set('X-Api-Key', t.adminKey).set('If-None-Match', tags);

  it('ndjson: the objects of the listing (with their marking), one per line, in its order', async () => {
    const response = await exportOf('format=ndjson');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const { objects } = await listAll(t, 'feed', 100);
    expect(lines(response.body as string).map((line) => JSON.parse(line))).toEqual(unscoredAll(objects));
  });

  it('csv: RFC 4180 with a header, one row per key, context as JSON, the marking last', async () => {
    const response = await exportOf('format=csv');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    const text = response.body as string;
    expect(text.startsWith('type,key type,key value,expiresAt,context,tlp\r\n')).toBe(true);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    const { objects } = await listAll(t, 'feed', 100);
    const expected = objects.flatMap((o: ObjectViewBody & { expiresAt?: string; tlp?: string }) =>
      o.keys.map((key) => ({
        type: o.type,
        'key type': key.type,
        'key value': key.value,
        expiresAt: o.expiresAt ?? '',
        context: JSON.stringify(o.context),
        tlp: o.tlp,
      })),
    );
    expect(rows).toEqual(expected);
    // Commas and quotes of the context are quoted, not field breaks.
    expect(JSON.parse(rows.find((row) => row['key value'] === 'evil.example')!.context)).toEqual({ source: 'report, "quoted"\r\nsecond line' });
    const hashes = parse((await exportOf('format=csv&keyType=SHA1Hash')).body as string, { columns: true }) as Record<string, string>[];
    expect(hashes.map((row) => row['key value'])).toEqual([sha1(1)]);
  });

  it('txt: the normalised values, each once; keyType makes one list per type; urlScheme=omit drops http(s)://', async () => {
    const all = await exportOf('format=txt');
    expect(all.headers['content-type']).toBe('text/plain; charset=utf-8');
    const { objects } = await listAll(t, 'feed', 100);
    const values = objects.flatMap((o) => o.keys.map((key) => key.value));
    expect(lines(all.body as string).sort()).toEqual([...new Set(values)].sort());

    expect(lines((await exportOf('format=txt&keyType=DomainName')).body as string).sort()).toEqual(['evil.example', 'other.example']);
    expect(lines((await exportOf('format=txt&keyType=URL')).body as string).sort()).toEqual([
      'http://a.example/x',
      'https://a.example/x',
      'https://b.example/login?u=1',
    ]);
    // The http and https twins are one line once the scheme is gone.
    expect(lines((await exportOf('format=txt&keyType=URL&urlScheme=omit')).body as string).sort()).toEqual(['a.example/x', 'b.example/login?u=1']);
    expect(lines((await exportOf('format=txt&keyType=IPNetwork')).body as string)).toEqual(['2001:db8::/32']);
  });

  it('stix: one bundle of the identity, the extension definition and per object the indicator and observable TAXII serves', async () => {
    const response = await exportOf('format=stix');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/stix+json;version=2.1');
    const bundle = JSON.parse(response.body as string) as { type: string; id: string; objects: { type: string; id: string }[] };
    expect(bundle.type).toBe('bundle');
    // A UUIDv4 in form (stix2-validator --strict refuses other versions), derived from the ETag.
    expect(bundle.id).toMatch(/^bundle--[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const { objects } = await listAll(t, 'feed', 100);
    expect(bundle.objects.map((o) => o.type)).toEqual([
      'identity',
      'extension-definition',
      ...objects.flatMap((o) => ['indicator', { File: 'file', DomainName: 'domain-name', URL: 'url', IPAddress: 'ipv4-addr', IPNetwork: 'ipv6-addr' }[o.type]]),
    ]);
    // Exactly what TAXII serves for these objects (one projection): each exported object, by id.
    const taxii = { Accept: 'application/taxii+json;version=2.1', 'X-Api-Key': t.adminKey };
    const collections = (await t.http().get('/taxii2/api/collections/').set(taxii)).body as { collections: { id: string; title: string }[] };
    const id = collections.collections.find((c) => c.title === 'feed')!.id;
    const served = (await t.http().get(`/taxii2/api/collections/${id}/objects/?limit=1000`).set(taxii)).body as { objects: { id: string }[] };
    const byId = new Map(served.objects.map((o) => [o.id, o]));
    for (const object of bundle.objects) expect(byId.get(object.id)).toEqual(object);
    // The same content gives the same bytes (the bundle id comes from the tag).
    expect((await exportOf('format=stix')).body).toBe(response.body);
  });

  it('refuses unknown formats and key types, and parameters the format does not take', async () => {
    for (const query of [
      '',
      'format=xml',
      'format=txt&keyType=Email',
      'format=ndjson&keyType=URL',
      'format=stix&keyType=URL',
      'format=csv&urlScheme=omit',
      'format=txt&urlScheme=strip',
      'format=txt&other=1',
    ]) {
      expectError(await t.http().get(`/intel/collections/feed/export?${query}`).set('X-Api-Key', t.adminKey), 'InvalidQueryArgument');
    }
    expectError(await t.http().get('/intel/collections/nowhere/export?format=txt').set('X-Api-Key', t.adminKey), 'NotFound');
  });

  it('leaves expired objects out', async () => {
    await createCollection(t, 'expiring');
    const soon = new Date(Date.now() + 1500).toISOString();
    await t
      .http()
      .post('/intel/collections/expiring/objects/batch')
      .set('X-Api-Key', t.adminKey)
      .send([object('DomainName', [['DomainName', 'stays.example']]), object('DomainName', [['DomainName', 'goes.example']], {}, soon)])
      .expect(200);
    expect(lines((await exportOf('format=txt', 'expiring')).body as string).sort()).toEqual(['goes.example', 'stays.example']);
    const before = (await exportOf('format=txt', 'expiring')).headers.etag;
    await sleep(Date.parse(soon) - Date.now() + 50);
    const after = await exportOf('format=txt', 'expiring');
    expect(lines(after.body as string)).toEqual(['stays.example']);
    // Gone without a change record yet (the job has not run): the tag still changes.
    expect(after.headers.etag).not.toBe(before);
    expect(lines((await exportOf('format=ndjson', 'expiring')).body as string).map((line) => JSON.parse(line).keys[0].value)).toEqual(['stays.example']);
  });

  it('conditional GET: 304 for the current tag, HEAD answers the headers; the tag moves after a write, not after a read', async () => {
    await createCollection(t, 'polled');
    await addDomain('polled', 'one.example');
    const first = await exportOf('format=txt&keyType=DomainName', 'polled');
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^"[^"]+"$/);
    expect(new Date(first.headers['last-modified'] as string).getTime()).not.toBeNaN();

    const notModified = await getIfNoneMatch(t, '/intel/collections/polled/export?format=txt&keyType=DomainName', tag);
    expect(notModified.status).toBe(304);
    expect(notModified.headers.etag).toBe(tag);
    expect(notModified.text ?? '').toBe('');
    const listOfTags = await getIfNoneMatch(t, '/intel/collections/polled/export?format=txt&keyType=DomainName', `"other", W/${tag}`);
    expect(listOfTags.status).toBe(304);

    const head = await t.http().head('/intel/collections/polled/export?format=txt&keyType=DomainName').set('X-Api-Key', t.adminKey);
    expect(head.status).toBe(200);
    expect(head.headers.etag).toBe(tag);
    expect(head.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(head.headers['last-modified']).toBe(first.headers['last-modified']);
    expect(first.headers['cache-control']).toBe('private, no-cache');

    // Another query is another tag.
    expect((await exportOf('format=csv', 'polled')).headers.etag).not.toBe(tag);

    // Reads (listing, feed, lookups, exports) move nothing.
    await listAll(t, 'polled', 10);
    await t
      .http()
      .post('/intel/lookup')
      .set('X-Api-Key', t.adminKey)
      .send({ keys: [{ type: 'DomainName', value: 'one.example' }] })
      .expect(200);
    expect((await exportOf('format=txt&keyType=DomainName', 'polled')).headers.etag).toBe(tag);

    // A write that changes nothing records nothing and keeps the tag; a real one moves it at once.
    await addDomain('polled', 'one.example');
    expect((await exportOf('format=txt&keyType=DomainName', 'polled')).headers.etag).toBe(tag);
    await addDomain('polled', 'two.example');
    const changed = await getIfNoneMatch(t, '/intel/collections/polled/export?format=txt&keyType=DomainName', tag);
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(tag);
    expect(lines(changed.text).sort()).toEqual(['one.example', 'two.example']);
  });

  it('two instances give one tag for one content, and a write on one moves the tag the other gives at once', async () => {
    const other = await createTestApp({}, t);
    try {
      const path = '/intel/collections/polled/export?format=txt&keyType=DomainName';
      const [here, there] = await Promise.all([t.http().head(path).set('X-Api-Key', t.adminKey), other.http().head(path).set('X-Api-Key', t.adminKey)]);
      expect(there.headers.etag).toBe(here.headers.etag);
      for (let n = 0; n < 5; n++) {
        await addDomain('polled', `instance-${n}.example`);
        const seen = await getIfNoneMatch(other, path, here.headers.etag as string);
        expect(seen.status).toBe(200);
        expect(lines(seen.text)).toContain(`instance-${n}.example`);
        expect((await t.http().head(path).set('X-Api-Key', t.adminKey)).headers.etag).toBe(seen.headers.etag);
      }
    } finally {
      await other.close();
    }
  });

  it('takes Basic credentials (any user name, the key as password); a wrong one is 401 asking for Basic; no Read is 403', async () => {
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const get = (authorization: string) => t.http().get('/intel/collections/feed/export?format=txt&keyType=DomainName').set('Authorization', authorization);

    const resources = (await t.http().get(`/auth/resources?parentID=${INTEL}`).set('X-Api-Key', t.adminKey)).body as { id: number; name: string }[];
    const feed = resources.find((resource) => resource.name === 'feed')!.id;
    const polled = resources.find((resource) => resource.name === 'polled')!.id;
    const reader = (await createKey(t, { permissions: [{ resource: feed, actions: ['Read'] }] })).key;
    const elsewhere = (await createKey(t, { permissions: [{ resource: polled, actions: ['Read'] }] })).key;

    const ok = await get(basic('paloalto', reader));
    expect(ok.status).toBe(200);
    expect(lines(ok.text).sort()).toEqual(['evil.example', 'other.example']);
    expect((await get(basic('', reader))).status).toBe(200);
    expect((await get(`Token ${reader}`)).status).toBe(200);

    const wrong = await get(basic('paloalto', `${reader}x`));
    expectError(wrong, 'Unauthorized');
    expect(wrong.headers['www-authenticate']).toBe('Basic realm="intel export", charset="UTF-8"');
    const none = await t.http().get('/intel/collections/feed/export?format=txt');
    expectError(none, 'Unauthorized');
    expect(none.headers['www-authenticate']).toMatch(/^Basic realm="intel export"/);
    expectError(await get(basic('x', elsewhere)), 'MissingPermissions');
  });

  it('is a snapshot: everything committed before the export started, nothing twice, while writers add objects', async () => {
    await createCollection(t, 'busy');
    const acknowledged: string[] = [];
    let writing = true;
    const writer = async (prefix: string) => {
      for (let n = 0; writing; n++) {
        const batch = Array.from({ length: 20 }, (_, i) => object('DomainName', [['DomainName', `${prefix}-${n}-${i}.example`]]));
        const response = await t.http().post('/intel/collections/busy/objects/batch').set('X-Api-Key', t.adminKey).send(batch);
        expect(response.status).toBe(200);
        acknowledged.push(...batch.map((o) => o.keys[0].value));
      }
    };
    const writers = [
      writer('a'),
      writer('b'),
      (async () => {
        for (let n = 0; writing; n++) {
          await addDomain('busy', `single-${n}.example`);
          acknowledged.push(`single-${n}.example`);
        }
      })(),
    ];
    try {
      for (let round = 0; round < 8; round++) {
        await sleep(30);
        const committed = [...acknowledged];
        const [txt, ndjson] = await Promise.all([exportOf('format=txt&keyType=DomainName', 'busy'), exportOf('format=ndjson', 'busy')]);
        for (const body of [lines(txt.body as string), lines(ndjson.body as string).map((line) => JSON.parse(line).keys[0].value as string)]) {
          expect(new Set(body).size).toBe(body.length);
          const exported = new Set(body);
          expect(committed.filter((value) => !exported.has(value))).toEqual([]);
        }
      }
    } finally {
      writing = false;
      await Promise.all(writers);
    }
    // At rest, the export is the listing.
    const { objects } = await listAll(t, 'busy', 1000);
    expect(lines((await exportOf('format=txt&keyType=DomainName', 'busy')).body as string).sort()).toEqual(objects.map((o) => o.keys[0].value).sort());
  });
  it('property: any object set round-trips through an ndjson export and a batch import unchanged', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 12 }).chain((size) => fc.tuple(...Array.from({ length: size }, (_, n) => objectFor(n)))),
        async (objects) => {
          const [source, target] = [`round-${++run}-a`, `round-${run}-b`];
          await createCollection(t, source);
          await createCollection(t, target);
          if (objects.length > 0) {
            const written = await t.http().post(`/intel/collections/${source}/objects/batch`).set('X-Api-Key', t.adminKey).send(objects);
            expect(written.body.added).toBe(objects.length);
          }
          // Every object, also those the built-in warninglists keep out of exports (10.x addresses).
          const exported = (await exportOf('format=ndjson&warninglists=ignore', source)).body as string;
          const listed = (await listAll(t, source, 1000)).objects;
          expect(lines(exported).map((line) => JSON.parse(line))).toEqual(unscoredAll(listed));
          if (objects.length > 0) {
            // The marking is a member of the view, not of the form (a write names it in its `tlp` query parameter).
            const forms = lines(exported).map((line) => JSON.stringify({ ...JSON.parse(line), tlp: undefined }) + '\n');
            const imported = await t
              .http()
              .post(`/intel/collections/${target}/objects/batch`)
              .set('X-Api-Key', t.adminKey)
              .set('Content-Type', 'application/x-ndjson')
              .send(forms.join(''));
            expect(imported.body).toMatchObject({ added: objects.length, failed: 0 });
          }
          expect((await exportOf('format=ndjson&warninglists=ignore', target)).body).toBe(exported);
        },
      ),
      { numRuns: 8 },
    );
  }, 120_000);
});
