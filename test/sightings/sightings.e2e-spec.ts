import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ObjectKey } from '../../src/common/indicators/indicators.js';
import { SightingSummariesService } from '../../src/sightings/sighting-summaries.service.js';
import { createCollection, hashedFile, hashKeys, md5, sha1 } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const INTEL = 2;
const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe('POST /intel/sightings', () => {
  let t: TestApp;
  let reader: { id: number; key: string };
  let outsider: string;

  const post = (body: unknown, key = t.adminKey) => t.sightings.as(key).record(body as object);
  const add = (c: string, body: object) => t.intel.add(c, body as Record<string, unknown>).expect(204);
  const statuses = (body: { status: string }[]) => body.map((result) => result.status);
  /** The summary a lookup (as the admin) shows for the one object holding the key. */
  const summaryOf = async (key: { type: string; value: string }) => {
    const response = await t.intel.lookup({ keys: [key] });
    expect(response.body[0].matches).toHaveLength(1);
    return response.body[0].matches[0].sightings;
  };

  beforeAll(async () => {
    t = await createTestApp();
    for (const name of ['seen-open', 'seen-secret']) await createCollection(t, name);
    for (let n = 1; n <= 6; n++) await add('seen-open', hashedFile(n));
    await add('seen-secret', { type: 'DomainName', keys: [{ type: 'DomainName', value: 'secret.example' }], context: {} });
    const resources = (await t.auth.resources(`?parentID=${INTEL}`)).body as { id: number; name: string }[];
    const id = (name: string) => resources.find((resource) => resource.name === name)!.id;
    reader = await createKey(t, {
      permissions: [
        { resource: id('seen-open'), actions: ['Read'] },
        { resource: id('seen-secret'), actions: ['Write'] },
      ],
    });
    outsider = (await createKey(t, { permissions: [] })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  it('records items per key, sums them per object over all its keys, and answers one status per item in order', async () => {
    const at1 = ago(3 * HOUR);
    const at2 = ago(HOUR);
    const response = await post([
      { type: 'MD5Hash', value: md5(1).toUpperCase(), source: 'siem-eu/fw-17', at: at2, count: 5 },
      { objectKeyType: 'SHA1Hash', objectKey: sha1(1), source: 'edr', at: at1 },
      { type: 'MD5Hash', value: md5(1), kind: 'falsePositive', source: 'analyst', count: 2, at: ago(0) },
      { type: 'DomainName', value: 'nowhere.example' },
    ]);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([{ status: 'Recorded' }, { status: 'Recorded' }, { status: 'Recorded' }, { status: 'Unknown' }]);
    // firstAt and lastAt over sightings only; sources of either kind, each once.
    expect(await summaryOf(hashedFile(1).keys[0])).toEqual({ count: 6, falsePositives: 2, firstAt: at1, lastAt: at2, sources: 3 });
    expect(await summaryOf({ type: 'SHA1Hash', value: sha1(1) })).toEqual(await summaryOf(hashedFile(1).keys[0]));
    // The one-object summary other areas show (provenance) is the same.
    expect(await t.app.get(SightingSummariesService).summaryOf(hashedFile(1).keys as ObjectKey[])).toEqual(await summaryOf(hashedFile(1).keys[0]));
    expect(await t.app.get(SightingSummariesService).summaryOf(hashedFile(2).keys as ObjectKey[])).toBeNull();
    expect(await summaryOf(hashedFile(2).keys[0])).toBeNull();
  });

  it('defaults kind, count, at and source (key/<keyID>) and counts a source seen on two keys of an object once', async () => {
    const before = Date.now();
    const response = await post(hashKeys(2), reader.key);
    expect(statuses(response.body)).toEqual(['Recorded', 'Recorded']);
    const summary = (await summaryOf(hashedFile(2).keys[0]))!;
    expect(summary).toMatchObject({ count: 2, falsePositives: 0, sources: 1 });
    expect(Date.parse(summary.firstAt!)).toBeGreaterThanOrEqual(before - 1000);
    const listed = await t.sightings.as(reader.key).sightings(`?objectKeyType=MD5Hash&objectKey=${md5(2)}`);
    expect(listed.body).toEqual([{ at: summary.firstAt, kind: 'sighting', source: `key/${reader.id}`, count: 1 }]);
  });

  it('counts an item with a client id once: again in the same request, in a later one, upper or lower case', async () => {
    const id = randomUUID();
    const item = { type: 'MD5Hash', value: md5(3), id };
    const first = await post([item, { ...item, count: 7 }, { type: 'MD5Hash', value: md5(3) }, { type: 'MD5Hash', value: md5(3) }]);
    expect(statuses(first.body)).toEqual(['Recorded', 'Duplicate', 'Recorded', 'Recorded']);
    const again = await post([
      { ...item, id: id.toUpperCase() },
      { type: 'SHA1Hash', value: sha1(3), id },
    ]);
    expect(statuses(again.body)).toEqual(['Duplicate', 'Duplicate']);
    expect(await summaryOf(hashedFile(3).keys[0])).toMatchObject({ count: 3 });
  });

  it('refuses malformed items on their own with a reason and records the others', async () => {
    const ok = { type: 'MD5Hash', value: md5(4) };
    const cases: [unknown, RegExp][] = [
      ['a string', /JSON object/],
      [null, /JSON object/],
      [[ok], /JSON object/],
      [{ ...ok, value: 42 }, /key value/],
      [{ ...ok, colour: 'red' }, /unknown field "colour"/],
      [{ type: 'MD5Hash' }, /key value/],
      [{ ...ok, objectKeyType: 'MD5Hash', objectKey: md5(4) }, /either/],
      [{}, /either/],
      [{ type: 'Colour', value: 'red' }, /key type/],
      [{ type: 'MD5Hash', value: 'not-a-hash' }, /MD5/i],
      [{ ...ok, kind: 'hit' }, /kind/],
      [{ ...ok, source: '' }, /source/],
      [{ ...ok, source: 'x'.repeat(129) }, /source/],
      [{ ...ok, source: 'fw\u0000' }, /U\+0000/],
      [{ ...ok, source: 'half \ud800 a pair' }, /surrogate/],
      [{ type: 'URL', value: 'http://a.example/\u0000' }, /U\+0000/],
      [{ ...ok, count: 0 }, /count/],
      [{ ...ok, count: 1_000_001 }, /count/],
      [{ ...ok, count: 1.5 }, /count/],
      [{ ...ok, count: '3' }, /count/],
      [{ ...ok, id: 'not-a-uuid' }, /UUID/],
      [{ ...ok, at: 'yesterday' }, /RFC 3339/],
      [{ ...ok, at: '2026-02-30T00:00:00Z' }, /RFC 3339/],
      [{ ...ok, at: new Date(Date.now() + 10 * 60_000).toISOString() }, /future/],
      [{ ...ok, at: ago(366 * 24 * HOUR) }, /retention/],
    ];
    const response = await post([...cases.map(([item]) => item), { ...ok, count: 1_000_000, at: new Date(Date.now() + 60_000).toISOString() }]);
    expect(response.status).toBe(200);
    cases.forEach(([, reason], index) => {
      expect(response.body[index].status).toBe('Invalid');
      expect(response.body[index].reason).toMatch(reason);
    });
    expect(response.body[cases.length]).toEqual({ status: 'Recorded' });
    expect(await summaryOf(hashedFile(4).keys[0])).toMatchObject({ count: 1_000_000 });
  });

  it('acts only on keys in collections the caller may read: others are Unknown and nothing is stored', async () => {
    const secret = { type: 'DomainName', value: 'Secret.Example.' };
    expect(statuses((await post([secret, { type: 'MD5Hash', value: md5(5) }], reader.key)).body)).toEqual(['Unknown', 'Recorded']);
    expect(statuses((await post([secret, { type: 'MD5Hash', value: md5(5) }], outsider)).body)).toEqual(['Unknown', 'Unknown']);
    expect(await summaryOf({ type: 'DomainName', value: 'secret.example' })).toBeNull();
    expect(await summaryOf(hashedFile(5).keys[0])).toMatchObject({ count: 1 });
    // The admin reads every collection.
    expect(statuses((await post([secret])).body)).toEqual(['Recorded']);
    // An Unknown item's id is not taken: the same item is recorded once its key can be found.
    const id = randomUUID();
    expect(statuses((await post([{ ...secret, id }], reader.key)).body)).toEqual(['Unknown']);
    expect(statuses((await post([{ ...secret, id }])).body)).toEqual(['Recorded']);
  });

  it('refuses a body that is not a non-empty array of at most 10,000 items, and needs a key', async () => {
    expectError(await post({ type: 'MD5Hash', value: md5(1) }), 'InvalidData');
    expectError(await post([]), 'InvalidData');
    const broken = await t.sightings.post('/intel/sightings').set('Content-Type', 'application/json').send('[{"type": "MD5Hash",');
    expectError(broken, 'InvalidData');
    const tooMany = Array.from({ length: 10_001 }, () => ({ type: 'MD5Hash', value: md5(6) }));
    expectError(await post(tooMany), 'RequestEntityTooLarge');
    expect(await summaryOf(hashedFile(6).keys[0])).toBeNull();
    const full = await post(tooMany.slice(1));
    expect(full.status).toBe(200);
    expect(await summaryOf(hashedFile(6).keys[0])).toMatchObject({ count: 10_000, sources: 1 });
    expectError(
      await t
        .http()
        .post('/intel/sightings')
        .send([{ type: 'MD5Hash', value: md5(1) }]),
      'Unauthorized',
    );
  });
});
