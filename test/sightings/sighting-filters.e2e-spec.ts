import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection, hashedFile, md5, sha1 } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe('sightedSince and excludeFalsePositives on listings and exports', () => {
  let t: TestApp;

  const post = (body: unknown) => t.sightings.record(body as object).expect(200);
  const listed = async (query: string) => {
    const values: string[] = [];
    let path: string | undefined = `/intel/collections/filtered/objects?limit=1&${query}`;
    while (path) {
      const response: { status: number; body: { keys: { value: string }[] }[]; headers: Record<string, string> } = await t.intel.get(path);
      expect(response.status).toBe(200);
      values.push(...response.body.map((object) => object.keys[0].value));
      path = parseLinks(response.headers.link).next;
    }
    return values;
  };
  const exported = (query: string, tag?: string) => {
    const request = t.intel.export('filtered', `?format=txt&keyType=MD5Hash&${query}`);
    return tag === undefined ? request : request.set('If-None-Match', tag);
  };

  beforeAll(async () => {
    t = await createTestApp();
    await createCollection(t, 'filtered');
    const objects = [1, 2, 3, 4].map((n) => hashedFile(n));
    await t.intel.batch('filtered', objects).expect(200);
    // 1: seen an hour ago; 2: ten days ago; 3: once, but marked a false positive three times (on its other key); 4: never.
    await post([
      { type: 'MD5Hash', value: md5(1), at: ago(HOUR) },
      { type: 'MD5Hash', value: md5(1), kind: 'falsePositive', at: ago(HOUR) },
      { type: 'SHA1Hash', value: sha1(2), at: ago(10 * DAY), count: 5 },
      { type: 'MD5Hash', value: md5(3), at: ago(20 * DAY) },
      { type: 'SHA1Hash', value: sha1(3), kind: 'falsePositive', count: 3 },
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists only objects sighted since the moment, or not mostly false positives, page by page', async () => {
    expect(await listed('')).toEqual([md5(1), md5(2), md5(3), md5(4)]);
    expect(await listed(`sightedSince=${ago(2 * DAY)}`)).toEqual([md5(1)]);
    expect(await listed(`sightedSince=${ago(30 * DAY)}`)).toEqual([md5(1), md5(2), md5(3)]);
    expect(await listed('excludeFalsePositives=true')).toEqual([md5(1), md5(2), md5(4)]);
    expect(await listed('excludeFalsePositives=false')).toEqual([md5(1), md5(2), md5(3), md5(4)]);
    expect(await listed(`excludeFalsePositives=true&sightedSince=${ago(30 * DAY)}`)).toEqual([md5(1), md5(2)]);
    expectError(await t.intel.objects('filtered', '?sightedSince=last-week'), 'InvalidQueryArgument');
    expectError(await t.intel.objects('filtered', '?sightedSince=2026-02-30T00:00:00Z'), 'InvalidQueryArgument');
    expectError(await t.intel.objects('filtered', '?excludeFalsePositives=yes'), 'InvalidQueryArgument');
  });

  it('exports only the filtered objects, with an ETag that moves with the sightings only when filtered', async () => {
    const since = `sightedSince=${encodeURIComponent(ago(30 * DAY))}`;
    const filtered = await exported(`${since}&excludeFalsePositives=true`);
    expect(filtered.status).toBe(200);
    expect(filtered.text).toBe(`${md5(1)}\n${md5(2)}\n`);
    const plain = await exported('');
    expect(plain.text).toBe([1, 2, 3, 4].map((n) => `${md5(n)}\n`).join(''));
    expect(plain.headers.etag).not.toBe(filtered.headers.etag);
    expect((await exported(`${since}&excludeFalsePositives=true`, filtered.headers.etag)).status).toBe(304);

    // A new sighting (of object 4) changes what the filtered export holds and so its tag; the plain one keeps its tag.
    await post([{ type: 'SHA1Hash', value: sha1(4) }]);
    const after = await exported(`${since}&excludeFalsePositives=true`, filtered.headers.etag);
    expect(after.status).toBe(200);
    expect(after.text).toBe(`${md5(1)}\n${md5(2)}\n${md5(4)}\n`);
    expect((await exported('', plain.headers.etag)).status).toBe(304);
    expect((await t.intel.export('filtered', `?format=ndjson&${since}`)).text.trim().split('\n')).toHaveLength(4);
    expectError(await exported('excludeFalsePositives=1'), 'InvalidQueryArgument');
  });
});
