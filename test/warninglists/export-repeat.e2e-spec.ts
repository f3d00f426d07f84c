import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection } from '../intel/objects.helpers.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { asText, patchList, sortedLines } from './warninglists.helpers.js';

const INTEL = 2;

const object = (type: string, keys: [string, string][]) => ({ type, keys: keys.map(([keyType, value]) => ({ type: keyType, value })), context: {} });

/**
 * A repeated export of an unchanged collection and lists answers from the objects kept out at that state
 * (no first pass): the same bytes and count; any write or list change is another state, never a stale answer.
 */
describe('warninglists: repeated exports', () => {
  let t: TestApp;
  let reader: string;

  const exportOf = async (format: string) => {
    const response = await asText(t.intel.as(reader).export('repeat', `?format=${format}`));
    expect(response.status).toBe(200);
    return { body: response.body as string, tag: response.headers.etag as string, excluded: response.headers['x-excluded-count'] as string };
  };
  const add = async (...objects: ReturnType<typeof object>[]) => {
    const written = await t.intel.batch('repeat', objects).expect(200);
    expect(written.body.added).toBe(objects.length);
  };

  beforeAll(async () => {
    t = await createTestApp();
    reader = (await createKey(t, { permissions: [{ resource: INTEL, actions: ['Read', 'ReadChildren'] }] })).key;
    await createCollection(t, 'repeat');
    await add(
      object('IPAddress', [['IPAddress', '8.8.8.8']]),
      object('IPAddress', [['IPAddress', '10.1.2.3']]),
      object('IPAddress', [['IPAddress', '203.0.113.5']]),
      object('DomainName', [['DomainName', 'evil.example']]),
    );
  });

  afterAll(async () => {
    await t?.close();
  });

  it('an export repeated at the same state gives the same bytes, tag and count, in every format', async () => {
    for (const format of ['txt', 'csv', 'ndjson', 'stix']) {
      const first = await exportOf(format);
      expect(first.excluded).toBe('2');
      const again = await exportOf(format);
      expect(again).toEqual(first);
    }
    expect(sortedLines((await exportOf('txt')).body)).toEqual(['203.0.113.5', 'evil.example']);
  });

  it('a write moves the state: an added listed value counts, an added unlisted one is in the body', async () => {
    const before = await exportOf('txt');
    await add(object('IPAddress', [['IPAddress', '1.1.1.1']]));
    const listed = await exportOf('txt');
    expect(listed.tag).not.toBe(before.tag);
    expect(listed.excluded).toBe('3');
    expect(listed.body).toBe(before.body);
    // HEAD of the new state: the count of the GET just answered.
    expect((await t.intel.as(reader).head('/intel/collections/repeat/export?format=csv').expect(200)).headers['x-excluded-count']).toBe('3');
    await add(object('DomainName', [['DomainName', 'benign.example']]));
    const unlisted = await exportOf('txt');
    expect(unlisted.excluded).toBe('3');
    expect(sortedLines(unlisted.body)).toEqual(['203.0.113.5', 'benign.example', 'evil.example']);
  });

  it('a list change moves the state, and a return to an earlier state of the lists answers as before', async () => {
    const before = await exportOf('ndjson');
    await t.warninglists.create({ name: 'evil', kind: 'hostname', action: 'excludeFromExport', entries: ['evil.example'] }).expect(201);
    const evil = await exportOf('txt');
    expect(evil.excluded).toBe('4');
    expect(sortedLines(evil.body)).toEqual(['203.0.113.5', 'benign.example']);
    const ndjson = await exportOf('ndjson');
    expect(ndjson.excluded).toBe('4');
    expect(ndjson.body).not.toBe(before.body);
    await patchList(t, 'evil', { enabled: false });
    expect(await exportOf('ndjson')).toEqual(before);
    await patchList(t, 'public-dns-resolvers', { enabled: false });
    const resolvers = await exportOf('txt');
    expect(resolvers.excluded).toBe('1');
    expect(sortedLines(resolvers.body)).toEqual(['1.1.1.1', '203.0.113.5', '8.8.8.8', 'benign.example', 'evil.example']);
    // The list's revision moved with each change (a new tag), its answer is as before.
    await patchList(t, 'public-dns-resolvers', { enabled: true });
    const back = await exportOf('ndjson');
    expect(back.tag).not.toBe(before.tag);
    expect({ ...back, tag: before.tag }).toEqual(before);
  });
});
