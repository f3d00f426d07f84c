import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { expectTaxiiError } from '../support/clients/taxii.js';
import { parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection as createFeed, ROOT, taxiiClient } from '../taxii/taxii-support.js';

const DAY = 86_400_000;
const at = (ms: number) => new Date(ms).toISOString();
const domain = (n: number) => `d${String(n).padStart(2, '0')}.example`;

/**
 * `score` in views and the `minScore`/`scoreAt` filters (extensions §18 "Where it shows", "Filters"). Scores are
 * set through their inputs: an override (set by SQL: the override endpoint is another part's), false positives
 * (sightings) and, for decay, a collection's decay of one day (set by SQL: the collection form's `scoring` is
 * another part's). Every expectation is computed here from those inputs, independently of the service.
 */
describe('scores in listings, lookups and provenance, and the minScore/scoreAt filters', () => {
  let t: TestApp;
  let feedId: string;
  /** The score of each domain of `scored` now, as its inputs give it. */
  const expected = new Map<string, number>();
  let writtenAt: number;

  const listed = async (collection: string, query: string, limit: number) => {
    const pages: { value: string; score: number }[][] = [];
    let path: string | undefined = `/intel/collections/${collection}/objects?limit=${limit}&${query}`;
    while (path) {
      const response: { status: number; body: { keys: { value: string }[]; score: number }[]; headers: Record<string, string> } = await t.intel.get(path);
      expect(response.status).toBe(200);
      pages.push(response.body.map((object) => ({ value: object.keys[0].value, score: object.score })));
      path = parseLinks(response.headers.link).next;
    }
    return pages;
  };
  const atLeast = (min: number) => [...expected].filter(([, score]) => score >= min).map(([value]) => value);

  beforeAll(async () => {
    t = await createTestApp();
    feedId = await createFeed(t, 'scored');
    await createCollection(t, 'decaying');
    // d00..d11 overridden to 0, 9, …, 99; d12..d14 plain (F/6 native writes: 50); d15 and d16 with 1 and 4 false positives (25, 10;
    // DomainName's default decay of 300 days takes a hair off, far from a rounding edge).
    const values = Array.from({ length: 17 }, (_, n) => domain(n));
    await t.intel
      .batch(
        'scored',
        values.map((value) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} })),
      )
      .expect(200);
    for (let n = 0; n < 12; n++) {
      await t.db.query(`UPDATE intel_object SET score_override = $1 WHERE keys @> jsonb_build_array(jsonb_build_object('value', $2::text))`, [
        n * 9,
        domain(n),
      ]);
      expected.set(domain(n), n * 9);
    }
    for (const n of [12, 13, 14]) expected.set(domain(n), 50);
    await t.sightings
      .record([
        { type: 'DomainName', value: domain(15), kind: 'falsePositive' },
        { type: 'DomainName', value: domain(16), kind: 'falsePositive', count: 4 },
      ])
      .expect(200);
    expected.set(domain(15), 25).set(domain(16), 10);

    writtenAt = Date.now();
    await t.intel
      .batch(
        'decaying',
        [1, 2].map((n) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value: `decay${n}.example` }], context: {} })),
      )
      .expect(200);
    await t.db.query(
      `UPDATE intel_collection SET scoring = jsonb_set(scoring, '{decay,DomainName}', '{"lifetimeDays": 1, "speed": 1}') WHERE name = 'decaying'`,
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('shows every listed object with its score, and lists exactly those at or above minScore, every page full while more match', async () => {
    const all = (await listed('scored', '', 100)).flat();
    expect(new Map(all.map(({ value, score }) => [value, score]))).toEqual(expected);
    for (const min of [0, 10, 10.5, 50, 50.5, 99, 100]) {
      for (const limit of [1, 2, 3]) {
        const pages = await listed('scored', `minScore=${min}`, limit);
        const values = pages.flat().map(({ value }) => value);
        expect(values).toEqual(atLeast(min));
        // Pages never short while more match: only the last may hold fewer (an empty last page only when none match).
        for (const page of pages.slice(0, -1)) expect(page).toHaveLength(limit);
        for (const { value, score } of pages.flat()) expect(score).toBe(expected.get(value));
      }
    }
  });

  it('computes scores at scoreAt: decay over the collection’s lifetime, never before the anchor', async () => {
    const scoresAt = async (time: number, query = '') =>
      (await listed('decaying', `scoreAt=${encodeURIComponent(at(time))}${query}`, 10)).flat().map(({ score }) => score);
    expect(await scoresAt(writtenAt - DAY)).toEqual([50, 50]);
    // A quarter of the lifetime: 50 × 0.75 = 37.5, reported 38 (±1 for the moments between writtenAt and the write).
    for (const score of await scoresAt(writtenAt + DAY / 4)) expect(Math.abs(score - 38)).toBeLessThanOrEqual(1);
    for (const score of await scoresAt(writtenAt + DAY / 2)) expect(Math.abs(score - 25)).toBeLessThanOrEqual(1);
    expect(await scoresAt(writtenAt + 2 * DAY)).toEqual([0, 0]);
    expect(await scoresAt(writtenAt + DAY / 4, '&minScore=30')).toHaveLength(2);
    expect(await scoresAt(writtenAt + DAY / 2, '&minScore=30')).toEqual([]);
    expect(await scoresAt(writtenAt + 3 * DAY, '&minScore=0')).toEqual([0, 0]);

    // Lookups and provenance take scoreAt too; without it they show the score now.
    const decayed = at(writtenAt + 2 * DAY);
    const lookup = await t.intel.lookup({ keys: [{ type: 'DomainName', value: 'decay1.example' }], scoreAt: decayed }).expect(200);
    expect(lookup.body[0].matches[0].object.score).toBe(0);
    const now = await t.intel
      .lookup({
        keys: [
          { type: 'DomainName', value: 'decay1.example' },
          { type: 'DomainName', value: domain(9) },
        ],
      })
      .expect(200);
    expect(now.body.map((entry: { matches: { object: { score: number } }[] }) => entry.matches[0].object.score)).toEqual([50, 81]);
    const provenance = (query: string) =>
      t.intel.get(`/intel/collections/decaying/objects/provenance?objectKeyType=DomainName&objectKey=decay1.example${query}`);
    expect((await provenance('')).body.score).toBe(50);
    expect((await provenance(`&scoreAt=${encodeURIComponent(decayed)}`)).body.score).toBe(0);
    expectError(await provenance('&scoreAt=tomorrow'), 'InvalidQueryArgument');
    expectError(await t.intel.lookup({ keys: [{ type: 'DomainName', value: 'decay1.example' }], scoreAt: 'tomorrow' }), 'InvalidData');
  });

  it('exports exactly the objects at or above minScore in every format', async () => {
    const want = atLeast(50);
    const exported = (query: string) => t.intel.export('scored', `?minScore=50&${query}`);
    const txt = await exported('format=txt');
    expect(txt.status).toBe(200);
    expect(txt.text).toBe(
      want
        .slice()
        .sort()
        .map((value) => `${value}\n`)
        .join(''),
    );
    expect(txt.headers['x-excluded-count']).toBe('0');
    expect((await exported('format=txt&keyType=DomainName')).text).toBe(want.map((value) => `${value}\n`).join(''));
    const csv = (await exported('format=csv')).text.trim().split('\n').slice(1);
    expect(csv.map((line) => line.split(',')[2])).toEqual(want);
    const ndjson = (await exported('format=ndjson')).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { keys: { value: string }[]; score?: number });
    expect(ndjson.map((object) => object.keys[0].value)).toEqual(want);
    // Exports show no score (it moves with time).
    expect(ndjson.every((object) => object.score === undefined)).toBe(true);
    const bundle = JSON.parse((await exported('format=stix')).text) as { objects: { type: string; pattern?: string }[] };
    const patterns = bundle.objects.filter((object) => object.type === 'indicator').map((object) => object.pattern!.match(/'([^']+)'/)![1]);
    expect(patterns).toEqual(want);
    expect((await t.intel.export('scored', '?format=txt&minScore=0')).text.trim().split('\n')).toHaveLength(17);
  });

  it('answers 304 to a repeat with scoreAt until an input changes; without scoreAt, never', async () => {
    const scoreAt = encodeURIComponent(at(writtenAt + DAY));
    const exported = (query: string, tag?: string) => {
      const request = t.intel.export('scored', `?format=txt&keyType=DomainName&minScore=50${query}`);
      return tag === undefined ? request : request.set('If-None-Match', tag);
    };
    const first = await exported(`&scoreAt=${scoreAt}`);
    expect(first.status).toBe(200);
    expect((await exported(`&scoreAt=${scoreAt}`, first.headers.etag)).status).toBe(304);
    // Another time or another minScore is another tag.
    expect((await exported(`&scoreAt=${encodeURIComponent(at(writtenAt + 2 * DAY))}`, first.headers.etag)).status).toBe(200);
    // A sighting (no change record) changes a score: 200 with the new body.
    await t.sightings.record([{ type: 'DomainName', value: domain(12), kind: 'falsePositive' }]).expect(200);
    const after = await exported(`&scoreAt=${scoreAt}`, first.headers.etag);
    expect(after.status).toBe(200);
    expect(after.text).not.toContain(domain(12));
    expect(after.text.trim().split('\n')).toHaveLength(first.text.trim().split('\n').length - 1);
    expect(after.headers.etag).not.toBe(first.headers.etag);
    expect((await exported(`&scoreAt=${scoreAt}`, after.headers.etag)).status).toBe(304);
    // Without scoreAt the answer is judged at the request's time: never 304, also HEAD carries a tag of its own.
    const now = await exported('');
    expect(now.status).toBe(200);
    expect((await exported('', now.headers.etag)).status).toBe(200);
    expect((await exported('', now.headers.etag)).headers.etag).not.toBe(now.headers.etag);
    // Without minScore the tag is what it was (no score is read).
    const plain = await t.intel.export('scored', '?format=txt&keyType=DomainName');
    expect((await t.intel.export('scored', '?format=txt&keyType=DomainName').set('If-None-Match', plain.headers.etag)).status).toBe(304);
    await t.sightings.record([{ type: 'DomainName', value: domain(13), kind: 'falsePositive' }]).expect(200);
    expect((await t.intel.export('scored', '?format=txt&keyType=DomainName').set('If-None-Match', plain.headers.etag)).status).toBe(304);
    expected.set(domain(12), 25).set(domain(13), 25);
  });

  it('serves TAXII objects and manifests at or above minScore, walking with next carrying minScore and scoreAt', async () => {
    const admin = taxiiClient(t, t.adminKey);
    const walk = async (path: string, query: string) => {
      const ids: string[] = [];
      const tokens: { f: { score?: { min: number; at: string } } }[] = [];
      let response = await admin.get(`${ROOT}/collections/${feedId}/${path}/?${query}`);
      for (;;) {
        expect(response.status).toBe(200);
        const body = response.body as { more: boolean; next?: string; objects?: { id: string }[] };
        ids.push(...(body.objects ?? []).map((object) => object.id));
        if (!body.more) return { ids, tokens };
        tokens.push(JSON.parse(Buffer.from(body.next!, 'base64url').toString('utf8')));
        response = await admin.get(`${ROOT}/collections/${feedId}/${path}/?next=${body.next}`);
      }
    };
    const indicatorOf = new Map<string, string>();
    const all = (await admin.get(`${ROOT}/collections/${feedId}/objects/?match[type]=indicator&limit=100`)).body as {
      objects: { id: string; pattern: string }[];
    };
    for (const object of all.objects) indicatorOf.set(object.pattern.match(/'([^']+)'/)![1], object.id);
    const want = atLeast(50).map((value) => indicatorOf.get(value));
    expect(want).toHaveLength(7);

    const objects = await walk('objects', 'match[type]=indicator&limit=2&minScore=50');
    expect(objects.ids).toEqual(want);
    expect(objects.tokens.length).toBeGreaterThan(1);
    const first = objects.tokens[0].f.score!;
    expect(first.min).toBe(50);
    // The walk's scoreAt is fixed at its first page.
    for (const token of objects.tokens) expect(token.f.score).toEqual(first);

    const scoreAt = at(writtenAt + DAY);
    const manifest = await walk('manifest', `match[type]=indicator&limit=3&minScore=50&scoreAt=${encodeURIComponent(scoreAt)}`);
    expect(manifest.ids).toEqual(want);
    for (const token of manifest.tokens) expect(token.f.score).toEqual({ min: 50, at: scoreAt });
    expect((await walk('objects', 'match[type]=indicator&limit=5&minScore=100')).ids).toEqual([]);

    for (const query of ['minScore=101', 'minScore=-1', 'minScore=abc', 'minScore=50&scoreAt=soon', 'minScore=50&scoreAt=2030-02-30T00:00:00Z']) {
      expectTaxiiError(await admin.get(`${ROOT}/collections/${feedId}/objects/?${query}`), 'InvalidQueryArgument');
      expectTaxiiError(await admin.get(`${ROOT}/collections/${feedId}/manifest/?${query}`), 'InvalidQueryArgument');
    }
  });

  it('refuses a minScore that is no number from 0 to 100 and a malformed scoreAt (400 InvalidQueryArgument)', async () => {
    for (const query of [
      'minScore=101',
      'minScore=-1',
      'minScore=',
      'minScore=1e2',
      'minScore=fifty',
      'scoreAt=tomorrow',
      'minScore=5&scoreAt=2030-02-30T00:00:00Z',
    ]) {
      expectError(await t.intel.objects('scored', `?${query}`), 'InvalidQueryArgument');
      expectError(await t.intel.export('scored', `?format=txt&${query}`), 'InvalidQueryArgument');
    }
  });
});
