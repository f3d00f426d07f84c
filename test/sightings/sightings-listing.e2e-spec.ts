import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SightingRollupService } from '../../src/sightings/sighting-rollup.service.js';
import { createCollection, md5 } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const INTEL = 2;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A moment `ms` before the start of the current hour, so that items fall into known hours. */
const hourStart = Math.floor(Date.now() / HOUR) * HOUR;
const before = (ms: number) => new Date(hourStart - ms).toISOString();

describe('GET /intel/sightings and the hourly roll-up', () => {
  let t: TestApp;
  let reader: string;

  const post = (body: unknown) => t.sightings.record(body as object).expect(200);
  const list = (query: string, key = t.adminKey) => t.sightings.as(key).sightings(`?${query}`);
  const summaryOf = async (n: number) => (await t.intel.lookup({ keys: [{ type: 'MD5Hash', value: md5(n) }] })).body[0].matches[0].sightings;
  /** Every page, following `rel="next"` verbatim. */
  const listAll = async (query: string) => {
    const items: unknown[] = [];
    let path: string | undefined = `/intel/sightings?${query}`;
    while (path) {
      const response: { status: number; body: unknown[]; headers: Record<string, string> } = await t.sightings.get(path);
      expect(response.status).toBe(200);
      items.push(...response.body);
      path = parseLinks(response.headers.link as string | undefined).next;
    }
    return items;
  };

  beforeAll(async () => {
    t = await createTestApp();
    await createCollection(t, 'listed');
    await createCollection(t, 'hidden');
    for (const n of [1, 2]) {
      await t.intel.add('listed', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(n) }], context: {} }).expect(204);
    }
    await t.intel.add('hidden', { type: 'File', keys: [{ type: 'MD5Hash', value: md5(3) }], context: {} }).expect(204);
    const resources = (await t.auth.resources(`?parentID=${INTEL}`)).body as { id: number; name: string }[];
    reader = (await createKey(t, { permissions: [{ resource: resources.find((r) => r.name === 'listed')!.id, actions: ['Read'] }] })).key;
  });
  afterAll(async () => {
    await t.close();
  });

  it('pages the sightings of a key newest first, with filters carried by the next link', async () => {
    const key = { type: 'MD5Hash', value: md5(1) };
    await post([
      { ...key, source: 'fw', at: before(4 * HOUR), count: 4 },
      { ...key, source: 'edr', at: before(3 * HOUR), count: 3 },
      { ...key, source: 'fw', at: before(2 * HOUR), kind: 'falsePositive', count: 2 },
      { ...key, source: 'fw', at: before(HOUR), count: 1 },
    ]);
    const all = [
      { at: before(HOUR), kind: 'sighting', source: 'fw', count: 1 },
      { at: before(2 * HOUR), kind: 'falsePositive', source: 'fw', count: 2 },
      { at: before(3 * HOUR), kind: 'sighting', source: 'edr', count: 3 },
      { at: before(4 * HOUR), kind: 'sighting', source: 'fw', count: 4 },
    ];
    const first = await list(`objectKeyType=MD5Hash&objectKey=${md5(1).toUpperCase()}&limit=3`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual(all.slice(0, 3));
    expect(cursorOf(parseLinks(first.headers.link as string).next)).toBeTruthy();
    expect(await listAll(`objectKeyType=MD5Hash&objectKey=${md5(1)}&limit=1`)).toEqual(all);
    expect(await listAll(`objectKeyType=MD5Hash&objectKey=${md5(1)}&limit=1&source=fw&kind=sighting`)).toEqual([all[0], all[3]]);
    // since inclusive, until exclusive.
    expect(await listAll(`objectKeyType=MD5Hash&objectKey=${md5(1)}&limit=1&since=${before(3 * HOUR)}&until=${encodeURIComponent(before(HOUR))}`)).toEqual([
      all[1],
      all[2],
    ]);
    expect((await list(`objectKeyType=MD5Hash&objectKey=${md5(2)}`)).body).toEqual([]);
  });

  it('answers [] for a key in no collection the caller may read, and checks its query', async () => {
    await post([{ type: 'MD5Hash', value: md5(3) }]);
    expect((await list(`objectKeyType=MD5Hash&objectKey=${md5(3)}`)).body).toHaveLength(1);
    const hidden = await list(`objectKeyType=MD5Hash&objectKey=${md5(3)}`, reader);
    expect(hidden.status).toBe(200);
    expect(hidden.body).toEqual([]);
    expect((await list(`objectKeyType=MD5Hash&objectKey=${md5(1)}`, reader)).body).toHaveLength(4);

    expectError(await list(`objectKey=${md5(1)}`), 'InvalidQueryArgument');
    expectError(await list('objectKeyType=MD5Hash'), 'InvalidQueryArgument');
    expectError(await list(`objectKeyType=Colour&objectKey=${md5(1)}`), 'InvalidQueryArgument');
    expectError(await list('objectKeyType=MD5Hash&objectKey=not-a-hash'), 'InvalidKeyFormat');
    expectError(await list(`objectKeyType=MD5Hash&objectKey=${md5(1)}&since=yesterday`), 'InvalidQueryArgument');
    expectError(await list(`objectKeyType=MD5Hash&objectKey=${md5(1)}&until=2026-02-30T00:00:00Z`), 'InvalidQueryArgument');
    expectError(await list(`objectKeyType=MD5Hash&objectKey=${md5(1)}&kind=hit`), 'InvalidQueryArgument');
    expectError(await list(`objectKeyType=MD5Hash&objectKey=${md5(1)}&cursor=eyJ0IjoxfQ`), 'InvalidQueryArgument');
    expectError(await t.http().get(`/intel/sightings?objectKeyType=MD5Hash&objectKey=${md5(1)}`), 'Unauthorized');
  });

  it('rolls raw items older than SIGHTING_RAW_DAYS into hours per source and kind, idempotently, and prunes past retention', async () => {
    const key = { type: 'MD5Hash', value: md5(2) };
    const old = 10 * DAY;
    await post([
      { ...key, source: 'fw', at: before(old - 10 * 60_000), count: 2 },
      { ...key, source: 'fw', at: before(old - 20 * 60_000), count: 3 },
      { ...key, source: 'fw', at: before(old - 30 * 60_000), kind: 'falsePositive' },
      { ...key, source: 'edr', at: before(old - 40 * 60_000), count: 5 },
      { ...key, source: 'fw', at: before(old + 10 * 60_000), count: 7 },
      { ...key, source: 'fw', at: before(2 * DAY), count: 11 },
    ]);
    const summary = await summaryOf(2);
    expect(summary).toMatchObject({ count: 28, falsePositives: 1, sources: 2 });
    const job = t.app.get(SightingRollupService);
    const query = `objectKeyType=MD5Hash&objectKey=${md5(2)}`;
    const rolled = [
      { at: before(2 * DAY), kind: 'sighting', source: 'fw', count: 11 },
      // The hour after before(old) is the hour starting there; the item 10 minutes before it is in the hour before.
      { at: before(old), kind: 'sighting', source: 'edr', count: 5 },
      { at: before(old), kind: 'falsePositive', source: 'fw', count: 1 },
      { at: before(old), kind: 'sighting', source: 'fw', count: 5 },
      { at: before(old + HOUR), kind: 'sighting', source: 'fw', count: 7 },
    ];
    const sorted = (items: unknown[]) =>
      [...(items as { at: string; source: string; kind: string }[])].sort((x, y) =>
        x.at === y.at ? `${x.source}${x.kind}`.localeCompare(`${y.source}${y.kind}`) : y.at.localeCompare(x.at),
      );

    expect(await job.run()).toMatchObject({ rolledUp: 5 });
    expect(sorted(await listAll(query))).toEqual(rolled);
    expect(await job.run()).toEqual({ rolledUp: 0, pruned: 0 });
    expect(sorted(await listAll(query))).toEqual(rolled);
    // A late item for an hour already rolled up is added into it on the next run.
    await post([{ ...key, source: 'edr', at: before(old - 50 * 60_000), count: 4 }]);
    expect(await job.run()).toMatchObject({ rolledUp: 1 });
    expect(sorted(await listAll(query))[1]).toEqual({ at: before(old), kind: 'sighting', source: 'edr', count: 9 });
    // The summary counts every item ever recorded, whatever the roll-up and the retention did to the details.
    expect(await summaryOf(2)).toEqual({ ...summary, count: 32 });

    // 360 days on, the roll-ups of ten days ago are past the 365 days of retention; the items of this file's
    // other tests (today) and of two days ago are not, and are rolled up now (an hour's start stays as it is).
    expect(await job.run(new Date(Date.now() + 360 * DAY))).toEqual({ rolledUp: 6, pruned: 4 });
    expect(await listAll(query)).toEqual([rolled[0]]);
    expect(await summaryOf(2)).toEqual({ ...summary, count: 32 });
  });

  it('runs on one instance at a time', async () => {
    const holder = await t.db.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(7240031)');
      expect(await t.app.get(SightingRollupService).run()).toBeUndefined();
      await holder.query('SELECT pg_advisory_unlock(7240031)');
      expect(await t.app.get(SightingRollupService).run()).toEqual({ rolledUp: 0, pruned: 0 });
    } finally {
      holder.release();
    }
  });
});
