import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BUMP_SCORE_VERSION } from '../../src/scoring/score-sql.js';
import { ROOT, taxiiClient } from '../support/clients/taxii.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

type Stix = Record<string, unknown> & { type: string; id: string; pattern?: string };

const domain = (value: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });

/**
 * STIX `confidence` (extensions §18) on every indicator, of TAXII and of the STIX export: the score without
 * decay from the object's inputs now (`base × fp` rounded, or the override while it holds); 0 for a life that
 * has ended. The STIX export's tag carries the score inputs' versions.
 */
describe('STIX confidence', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', schemaID: 'conf-any', title: 'any', type: 'object' };
    expect((await t.intel.createSchema(schema)).status).toBe(201);
    expect((await t.intel.createCollection({ name: 'conf', schemaID: 'conf-any' })).status).toBe(201);
    for (const value of ['plain.example', 'trusted.example', 'overridden.example', 'lapsed.example', 'gone.example']) {
      expect((await t.intel.add('conf', domain(value))).status).toBe(204);
    }
    expect((await t.intel.remove('conf', 'DomainName', 'gone.example')).status).toBe(204);
    const set = (value: string, assignments: string) => t.db.query(`UPDATE intel_object SET ${assignments} WHERE keys->0->>'value' = $1`, [value]);
    // The inputs as an A key's write and the override route would leave them (an A key's reliability is rank 5),
    // set directly. Every anchor a year back: decay plays no part.
    await t.db.query(`UPDATE intel_object SET api_last_seen_at = now() - interval '365 days'`);
    await set('trusted.example', 'api_reliability = 5'); // A and 6: strength 75
    await set('overridden.example', `score_override = 90, score_override_until = now() + interval '1 day'`);
    await set('lapsed.example', `score_override = 90, score_override_until = now() - interval '1 second'`);
  });
  afterAll(async () => {
    await t.close();
  });

  const expected: Record<string, number> = { 'plain.example': 50, 'trusted.example': 75, 'overridden.example': 90, 'lapsed.example': 50, 'gone.example': 0 };
  const valueOf = (indicator: Stix) => /'([^']+)'/.exec(indicator.pattern as string)![1];

  it('TAXII: every indicator version carries the confidence of its life now (0 once it ended)', async () => {
    const client = taxiiClient(t, t.adminKey);
    const id = ((await client.get(`${ROOT}/collections/`)).body as { collections: { id: string; alias: string }[] }).collections.find(
      (c) => c.alias === 'conf',
    )!.id;
    const response = await client.get(`${ROOT}/collections/${id}/objects/?match[type]=indicator&match[version]=all`);
    expect(response.status).toBe(200);
    const indicators = (response.body as { objects: Stix[] }).objects;
    expect(indicators).toHaveLength(6); // five adds and one removal
    for (const indicator of indicators) expect([valueOf(indicator), indicator.confidence]).toEqual([valueOf(indicator), expected[valueOf(indicator)]]);
  });

  it('the STIX export: the same confidence; its tag moves with the score inputs', async () => {
    const first = await t.intel.export('conf', '?format=stix');
    expect(first.status).toBe(200);
    const bundle = JSON.parse(first.text) as { objects: Stix[] };
    const indicators = bundle.objects.filter((object) => object.type === 'indicator');
    expect(Object.fromEntries(indicators.map((indicator) => [valueOf(indicator), indicator.confidence]))).toEqual({
      'plain.example': 50,
      'trusted.example': 75,
      'overridden.example': 90,
      'lapsed.example': 50,
    });
    const tag = first.headers.etag as string;
    expect((await t.intel.export('conf', '?format=stix').set('If-None-Match', tag)).status).toBe(304);
    // A score input changed without a change record (a claim, an override): the tag moves.
    await t.db.query(BUMP_SCORE_VERSION);
    const again = await t.intel.export('conf', '?format=stix').set('If-None-Match', tag);
    expect(again.status).toBe(200);
    expect(again.headers.etag).not.toBe(tag);
    // Other formats show no score: their tags stay.
    const txt = await t.intel.export('conf', '?format=txt');
    await t.db.query(BUMP_SCORE_VERSION);
    expect((await t.intel.export('conf', '?format=txt').set('If-None-Match', txt.headers.etag as string)).status).toBe(304);
  });
});
