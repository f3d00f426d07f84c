import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import type { Tlp } from '../../src/common/markings/tlp.js';
import { expectError } from '../support/clients/api-client.js';
import { readerUpTo } from '../support/markings.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, hashKeys, md5, sha1 } from './objects.helpers.js';

/** The TLP 2.0 marking definitions (STIX 2.1 common objects), by level, written out here. */
const MARKING_IDS: Record<string, string> = {
  'TLP:CLEAR': 'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487',
  'TLP:GREEN': 'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb',
  'TLP:AMBER': 'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421',
  'TLP:AMBER+STRICT': 'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003',
  'TLP:RED': 'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1',
};

const domain = (value: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });
const address = (value: string) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value }], context: {} });
const lines = (text: string) => text.split('\n').slice(0, -1);
type Stix = { type: string; id: string; pattern?: string; value?: string; hashes?: Record<string, string>; object_marking_refs?: string[] };

/**
 * Exports honour and show markings (extensions §19): what a key may not see is not exported nor counted,
 * `maxTLP=` narrows, rows carry `tlp`, STIX objects their marking definition, every answer `X-TLP-Max`.
 */
describe('exports and markings', () => {
  let t: TestApp;
  let green: string;

  /** The collection `marked`: one object per level, and two on the built-in lists (10.x addresses), CLEAR and AMBER. */
  const MARKED: [object, string, Tlp][] = [
    [domain('clear.example'), 'clear.example', 'TLP:CLEAR'],
    [domain('green.example'), 'green.example', 'TLP:GREEN'],
    [{ type: 'File', keys: hashKeys(1), context: {} }, md5(1), 'TLP:GREEN'],
    [domain('amber.example'), 'amber.example', 'TLP:AMBER'],
    [{ type: 'URL', keys: [{ type: 'URL', value: 'https://strict.example/x' }], context: {} }, 'https://strict.example/x', 'TLP:AMBER+STRICT'],
    [address('192.0.2.9'), '192.0.2.9', 'TLP:RED'],
    [address('10.0.0.1'), '10.0.0.1', 'TLP:CLEAR'],
    [address('10.0.0.2'), '10.0.0.2', 'TLP:AMBER'],
  ];

  beforeAll(async () => {
    t = await createTestApp();
    await createCollection(t, 'marked');
    for (const [object, , tlp] of MARKED) await add('marked', object, tlp);
    green = await readerUpTo(t, 'TLP:GREEN', 'marked');
  });
  afterAll(async () => {
    await t.close();
  });

  /** A native write marked `tlp`. */
  const add = (collection: string, object: object, tlp: Tlp) =>
    t
      .http()
      .post(`/intel/collections/${collection}/objects?tlp=${encodeURIComponent(tlp)}`)
      .set('X-Api-Key', t.adminKey)
      .send(object)
      .expect(204);
  const exportAs = (key: string, query: string, collection = 'marked', app = t) =>
    app
      .http()
      .get(`/intel/collections/${collection}/export?${query}`)
      .set('X-Api-Key', key)
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done(null, text));
      });
  const headAs = (key: string, query: string, collection = 'marked', app = t) =>
    app.http().head(`/intel/collections/${collection}/export?${query}`).set('X-Api-Key', key);
  const stateOf = (response: { headers: Record<string, string> }) => [response.headers['x-tlp-max'], response.headers['x-excluded-count']];

  it('a GREEN key exports what is marked CLEAR or GREEN, in every format; its counts leave out what it may not see', async () => {
    const visible = ['clear.example', 'green.example', md5(1), sha1(1)].sort();
    const txt = await exportAs(green, 'format=txt');
    expect(lines(txt.body as string).sort()).toEqual(visible);
    // Of the two listed addresses, the key sees the CLEAR one only: it alone is counted.
    expect(stateOf(txt)).toEqual(['TLP:GREEN', '1']);

    const csv = await exportAs(green, 'format=csv');
    expect((csv.body as string).startsWith('type,key type,key value,expiresAt,context,tlp\r\n')).toBe(true);
    const rows = parse(csv.body as string, { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => `${row['key value']} ${row.tlp}`).sort()).toEqual(
      [`clear.example TLP:CLEAR`, `green.example TLP:GREEN`, `${md5(1)} TLP:GREEN`, `${sha1(1)} TLP:GREEN`].sort(),
    );
    expect(stateOf(csv)).toEqual(['TLP:GREEN', '1']);

    const ndjson = await exportAs(green, 'format=ndjson');
    const objects = lines(ndjson.body as string).map((line) => JSON.parse(line) as { keys: { value: string }[]; tlp: string });
    expect(objects.map((o) => `${o.keys[0].value} ${o.tlp}`).sort()).toEqual(
      [`clear.example TLP:CLEAR`, `green.example TLP:GREEN`, `${md5(1)} TLP:GREEN`].sort(),
    );
    expect(stateOf(ndjson)).toEqual(['TLP:GREEN', '1']);

    const stix = await exportAs(green, 'format=stix');
    const marked = (JSON.parse(stix.body as string) as { objects: Stix[] }).objects.filter((o) => o.object_marking_refs !== undefined);
    expect(marked).toHaveLength(6);
    expect(new Set(marked.flatMap((o) => o.object_marking_refs))).toEqual(new Set([MARKING_IDS['TLP:CLEAR'], MARKING_IDS['TLP:GREEN']]));
    expect(marked.filter((o) => o.type === 'indicator').map((o) => o.pattern!.match(/'([^']+)'/)![1])).toEqual(
      expect.arrayContaining(['clear.example', 'green.example']),
    );
    expect(stateOf(stix)).toEqual(['TLP:GREEN', '1']);

    // An unrestricted key: everything but the listed, both of which it counts.
    const all = await exportAs(t.adminKey, 'format=txt');
    expect(lines(all.body as string).sort()).toEqual([...visible, 'amber.example', 'https://strict.example/x', '192.0.2.9'].sort());
    expect(stateOf(all)).toEqual(['TLP:RED', '2']);
  });

  it('X-TLP-Max is the most restrictive marking among the objects in the body: keyType and maxTLP choose them', async () => {
    expect(stateOf(await exportAs(t.adminKey, 'format=txt&keyType=DomainName'))).toEqual(['TLP:AMBER', '0']);
    expect(stateOf(await exportAs(t.adminKey, 'format=csv&keyType=SHA1Hash'))).toEqual(['TLP:GREEN', '0']);
    expect(stateOf(await exportAs(t.adminKey, 'format=txt&keyType=URL'))).toEqual(['TLP:AMBER+STRICT', '0']);
    expect(stateOf(await exportAs(green, 'format=txt&keyType=URL'))).toEqual(['TLP:CLEAR', '0']);
    expect((await exportAs(green, 'format=txt&keyType=URL')).body).toBe('');
  });

  it('maxTLP= narrows the key’s ceiling (case-insensitive, TLP:WHITE for CLEAR) and never widens it', async () => {
    const amber = await exportAs(t.adminKey, 'format=txt&maxTLP=TLP:AMBER');
    expect(lines(amber.body as string).sort()).toEqual(['amber.example', 'clear.example', 'green.example', md5(1), sha1(1)].sort());
    expect(stateOf(amber)).toEqual(['TLP:AMBER', '2']);
    const unrestricted = await exportAs(t.adminKey, 'format=txt');
    expect(amber.headers.etag).not.toBe(unrestricted.headers.etag);

    const white = await exportAs(t.adminKey, 'format=ndjson&maxTLP=tlp:white');
    expect(lines(white.body as string).map((line) => JSON.parse(line).keys[0].value)).toEqual(['clear.example']);
    expect(stateOf(white)).toEqual(['TLP:CLEAR', '1']);

    // A GREEN key asking for RED gets what it gets without asking: the same body, the same tag.
    const asked = await exportAs(green, 'format=csv&maxTLP=TLP:RED');
    const own = await exportAs(green, 'format=csv');
    expect(asked.body).toBe(own.body);
    expect(asked.headers.etag).toBe(own.headers.etag);
    expect(stateOf(asked)).toEqual(['TLP:GREEN', '1']);
  });

  it('a maxTLP that names no TLP level is 400 InvalidData', async () => {
    for (const maxTLP of ['TLP:PURPLE', 'GREEN', '', 'TLP:AMBER STRICT', 'tlp:amber+strict+']) {
      const refused = await t
        .http()
        .get(`/intel/collections/marked/export?format=txt&maxTLP=${encodeURIComponent(maxTLP)}`)
        .set('X-Api-Key', t.adminKey);
      expectError(refused, 'InvalidData');
      expect(refused.body.details).toEqual({ field: 'maxTLP' });
    }
    expect((await headAs(green, 'format=txt&maxTLP=RED')).status).toBe(400);
    // A spelling that is one: accepted whatever its case.
    expect((await exportAs(green, 'format=txt&maxTLP=tlp:amber%2Bstrict')).status).toBe(200);
  });

  it('HEAD and 304 carry X-TLP-Max and X-Excluded-Count, also from an instance that has not answered this state before', async () => {
    const query = 'format=ndjson&maxTLP=TLP:AMBER%2BSTRICT';
    const head = await headAs(t.adminKey, query);
    expect(head.status).toBe(200);
    expect(stateOf(head)).toEqual(['TLP:AMBER+STRICT', '2']);
    const body = await exportAs(t.adminKey, query);
    expect(body.headers.etag).toBe(head.headers.etag);
    expect(stateOf(body)).toEqual(stateOf(head));
    const notModified = await t.http().get(`/intel/collections/marked/export?${query}`).set('X-Api-Key', t.adminKey).set('If-None-Match', head.headers.etag);
    expect(notModified.status).toBe(304);
    expect(stateOf(notModified)).toEqual(['TLP:AMBER+STRICT', '2']);

    const other = await createTestApp({}, t);
    try {
      const fresh = await other
        .http()
        .get('/intel/collections/marked/export?format=csv&keyType=DomainName')
        .set('X-Api-Key', green)
        .set('If-None-Match', (await exportAs(green, 'format=csv&keyType=DomainName')).headers.etag);
      expect(fresh.status).toBe(304);
      expect(stateOf(fresh)).toEqual(['TLP:GREEN', '0']);
      expect(stateOf(await headAs(t.adminKey, 'format=stix', 'marked', other))).toEqual(['TLP:RED', '2']);
    } finally {
      await other.close();
    }
  });

  it('an export that holds nothing says TLP:CLEAR, as does one whose marked objects expired or are above the ceiling', async () => {
    await createCollection(t, 'quiet');
    const empty = await exportAs(t.adminKey, 'format=txt', 'quiet');
    expect(empty.body).toBe('');
    expect(stateOf(empty)).toEqual(['TLP:CLEAR', '0']);
    expect(stateOf(await headAs(t.adminKey, 'format=stix', 'quiet'))).toEqual(['TLP:CLEAR', '0']);

    await createCollection(t, 'fading');
    const soon = new Date(Date.now() + 1200).toISOString();
    await add('fading', domain('stays.example'), 'TLP:AMBER');
    await add('fading', { ...domain('fades.example'), expiresAt: soon }, 'TLP:RED');
    const reader = await readerUpTo(t, 'TLP:GREEN', 'fading');
    expect(stateOf(await exportAs(t.adminKey, 'format=txt', 'fading'))).toEqual(['TLP:RED', '0']);
    const hidden = await exportAs(reader, 'format=txt', 'fading');
    expect(hidden.body).toBe('');
    expect(stateOf(hidden)).toEqual(['TLP:CLEAR', '0']);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(soon) - Date.now() + 50));
    const after = await exportAs(t.adminKey, 'format=txt', 'fading');
    expect(lines(after.body as string)).toEqual(['stays.example']);
    expect(stateOf(after)).toEqual(['TLP:AMBER', '0']);
  });

  it('stix: each indicator and observable refers to the TLP 2.0 marking definition of its level; the bundle holds no marking definitions', async () => {
    const bundle = JSON.parse((await exportAs(t.adminKey, 'format=stix&warninglists=ignore')).body as string) as { objects: Stix[] };
    const levelOf = new Map(MARKED.map(([, value, tlp]) => [value, tlp]));
    const valueOf = (o: Stix) => (o.type === 'indicator' ? o.pattern!.match(/'([^']+)'/)![1] : (o.value ?? o.hashes!.MD5));
    for (const object of bundle.objects) {
      if (object.type === 'identity' || object.type === 'extension-definition') expect(object).not.toHaveProperty('object_marking_refs');
      else
        expect([object.type, valueOf(object), object.object_marking_refs]).toEqual([
          object.type,
          valueOf(object),
          [MARKING_IDS[levelOf.get(valueOf(object))!]],
        ]);
    }
    expect(bundle.objects.filter((o) => o.object_marking_refs !== undefined)).toHaveLength(2 * MARKED.length);
    expect(bundle.objects.some((o) => o.type === 'marking-definition')).toBe(false);
  });
});
