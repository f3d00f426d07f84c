import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection } from '../intel/objects.helpers.js';
import { FeedServer } from '../sources/feed-server.js';
import { runNow } from '../sources/sources.helpers.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { resourceIdOf } from '../taxii/taxii-support.js';

const DAY = 86_400_000;

interface Explanation {
  score: number;
  at: string;
  anchorAt: string;
  belowThresholdAt: string | null;
  [member: string]: unknown;
}

/** The JSON answer the worked example of docs/scoring.md shows, between its markers. */
async function documentedExplanation(): Promise<Explanation> {
  const text = await readFile('docs/scoring.md', 'utf8');
  const example = /<!-- scoring-example -->([\s\S]*?)<!-- \/scoring-example -->/.exec(text);
  if (!example) throw new Error('docs/scoring.md has no scoring-example block');
  const json = /```json\n([\s\S]*?)```/.exec(example[1]);
  if (!json) throw new Error('the scoring example has no JSON answer');
  return JSON.parse(json[1]) as Explanation;
}

/** The members of an explanation that do not depend on when it was made. */
const timeless = ({ at: _at, anchorAt: _anchorAt, belowThresholdAt: _below, claims, ...rest }: Explanation) => ({
  ...rest,
  claims: (claims as { lastSeenAt: string }[]).map(({ lastSeenAt: _seen, ...claim }) => claim),
});

/**
 * The worked example of docs/scoring.md, built as it says: a real source (B/2) and an analyst's key (C) claim
 * 203.0.113.7, the SOC reports three sightings and a false positive, and the explanation 15 days after the
 * anchor must be the documented answer, every number of it; its times must lie as far from the anchor as the
 * documented ones do.
 */
describe('docs/scoring.md: the worked example, as written', () => {
  let t: TestApp;
  let feed: FeedServer;

  beforeAll(async () => {
    t = await createTestApp({ SOURCE_POLL_SECONDS: '3600' });
    feed = await new FeedServer().start();
  });
  afterAll(async () => {
    await t.close();
    await feed.stop();
  });

  it('gives the documented explanation, 15 days after the anchor', async () => {
    await createCollection(t, 'c2');
    expect((await t.intel.updateCollection('c2', { scoring: { threshold: 50 } }, '"1"')).status).toBe(204);
    const analyst = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, 'c2'), actions: ['Read', 'Write'] }], reliability: 'C' });
    const ip = { type: 'IPAddress', keys: [{ type: 'IPAddress', value: '203.0.113.7' }], context: {} };
    // The analyst's write first: the source then claims an object the api already holds.
    await t.http().post('/intel/collections/c2/objects').set('X-Api-Key', analyst.key).send(ip).expect(204);
    feed.list('/abuse.txt', '203.0.113.7\n');
    const source = { name: 'abuse-feed', collection: 'c2', kind: 'text', url: feed.url('/abuse.txt'), reliability: 'B', credibility: 2 };
    expect((await t.sources.create(source)).status).toBe(201);
    expect((await runNow(t, 'abuse-feed')).outcome).toBe('ok');
    const sightings = await t
      .http()
      .post('/intel/sightings')
      .set('X-Api-Key', t.adminKey)
      .send([
        { type: 'IPAddress', value: '203.0.113.7', count: 3 },
        { type: 'IPAddress', value: '203.0.113.7', kind: 'falsePositive' },
      ]);
    expect((sightings.body as { status: string }[]).map((item) => item.status)).toEqual(['Recorded', 'Recorded']);

    const url = '/intel/collections/c2/objects/score?objectKeyType=IPAddress&objectKey=203.0.113.7';
    const now = (await t.http().get(url).set('X-Api-Key', t.adminKey).expect(200)).body as Explanation;
    const at = new Date(Date.parse(now.anchorAt) + 15 * DAY).toISOString();
    const later = (
      await t
        .http()
        .get(`${url}&at=${encodeURIComponent(at)}`)
        .set('X-Api-Key', t.adminKey)
        .expect(200)
    ).body as Explanation;

    const documented = await documentedExplanation();
    expect(timeless(later)).toEqual(timeless(documented));
    const sinceAnchor = (e: Explanation, time: string) => Date.parse(time) - Date.parse(e.anchorAt);
    expect(sinceAnchor(later, later.at)).toBe(sinceAnchor(documented, documented.at));
    // The moment is found to the millisecond; the anchor a view shows is cut to one, so the two may differ by one.
    expect(Math.abs(sinceAnchor(later, later.belowThresholdAt!) - sinceAnchor(documented, documented.belowThresholdAt!))).toBeLessThanOrEqual(1);
    // The claims' times are the writes', the run's and before the anchor, the last sighting's.
    for (const claim of later.claims as { lastSeenAt: string }[]) expect(Date.parse(claim.lastSeenAt)).toBeLessThanOrEqual(Date.parse(later.anchorAt));
    // At the anchor the score is 70, as the text says.
    expect(now.score).toBe(70);
  });
});
