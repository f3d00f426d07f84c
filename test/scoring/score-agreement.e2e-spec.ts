import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { belowAt, scoreOf, type ScoreInputs } from '../../src/scoring/score.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Admiralty numbers a claim can carry: reliabilities and credibilities, and any percentage. */
const admiralty = fc.constantFrom(0, 25, 50, 75, 100);
const claim = fc.record({ reliability: admiralty, credibility: fc.oneof(admiralty, fc.integer({ min: 0, max: 100 })) });
const DAY = 86_400_000;
const START = Date.UTC(2030, 0, 1);

const inputs: fc.Arbitrary<{ inputs: ScoreInputs; at: Date }> = fc
  .record({
    claims: fc.array(claim, { minLength: 0, maxLength: 6 }),
    count: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_000_000 })),
    falsePositives: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_000_000 })),
    anchor: fc.integer({ min: START, max: START + 400 * DAY }),
    // From before the anchor to well past any lifetime, to the millisecond.
    offset: fc.oneof(fc.integer({ min: -10 * DAY, max: 1000 * DAY }), fc.integer({ min: -1000, max: 1000 })),
    decay: fc.option(fc.record({ lifetimeDays: fc.double({ min: 0.001, max: 1000, noNaN: true }), speed: fc.double({ min: 0.01, max: 10, noNaN: true }) })),
    override: fc.option(fc.record({ score: fc.integer({ min: 0, max: 100 }), until: fc.option(fc.integer({ min: START, max: START + 800 * DAY })) })),
  })
  .map((r) => ({
    inputs: {
      claims: r.claims,
      sightings: { count: r.count, falsePositives: r.falsePositives },
      anchorAt: new Date(r.anchor),
      decay: r.decay,
      override: r.override && { score: r.override.score, until: r.override.until === null ? null : new Date(r.override.until) },
    },
    at: new Date(r.anchor + r.offset),
  }));

/** The SQL function `intel_score` over many samples in one statement, the claims' product by `intel_product` as objects' scores compute it. */
async function sqlScores(t: TestApp, samples: { inputs: ScoreInputs; at: Date }[]): Promise<number[]> {
  const rows = samples.map(({ inputs: i, at }) => ({
    factors: i.claims.map((c) => (200 - c.reliability - c.credibility) / 200),
    count: i.sightings.count,
    fps: i.sightings.falsePositives,
    anchor: i.anchorAt.toISOString(),
    lifetime: i.decay?.lifetimeDays ?? null,
    speed: i.decay?.speed ?? null,
    override: i.override?.score ?? null,
    until: i.override?.until?.toISOString() ?? null,
    at: at.toISOString(),
  }));
  const result = await t.db.query(
    `SELECT intel_score(COALESCE((SELECT intel_product(f::float8 ORDER BY f::float8) FROM jsonb_array_elements_text(s->'factors') f), 1),
                        (s->>'count')::float8, (s->>'fps')::float8, (s->>'anchor')::timestamptz, (s->>'lifetime')::float8, (s->>'speed')::float8,
                        (s->>'override')::smallint, (s->>'until')::timestamptz, (s->>'at')::timestamptz) AS score
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(s, n) ORDER BY n`,
    [JSON.stringify(rows)],
  );
  return result.rows.map((row: { score: number }) => row.score);
}

describe('the score: one TypeScript function and one SQL function', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('agree on thousands of random inputs and times, to the integer', async () => {
    const samples = fc.sample(inputs, { numRuns: 5000, seed: Number(process.env.SCORE_SEED ?? 20261129) });
    const sql = await sqlScores(t, samples);
    const disagreements = samples.map((sample, i) => ({ sample, ts: scoreOf(sample.inputs, sample.at).score, sql: sql[i] })).filter((d) => d.ts !== d.sql);
    expect(disagreements).toEqual([]);
    // The draw covers the formula's parts: decayed to 0, overridden, past an override, and everything between.
    expect(sql.filter((score) => score === 0).length).toBeGreaterThan(100);
    expect(new Set(sql).size).toBeGreaterThan(90);
  });

  it('falls below a bound exactly at the moment belowAt finds, by the SQL function too', async () => {
    const decaying = fc.sample(inputs, { numRuns: 400, seed: 7 }).filter(({ inputs: i }) => i.decay !== null);
    const probes: { inputs: ScoreInputs; at: Date }[] = [];
    const bounds: number[] = [];
    for (const sample of decaying) {
      const bound = 1 + (sample.at.getTime() % 100);
      const moment = belowAt(sample.inputs, bound, sample.inputs.anchorAt);
      if (moment === null || moment.getTime() === sample.inputs.anchorAt.getTime()) continue;
      probes.push({ inputs: sample.inputs, at: new Date(moment.getTime() - 1) }, { inputs: sample.inputs, at: moment });
      bounds.push(bound);
    }
    expect(bounds.length).toBeGreaterThan(50);
    const sql = await sqlScores(t, probes);
    bounds.forEach((bound, i) => {
      expect([sql[2 * i] >= bound, sql[2 * i + 1] < bound]).toEqual([true, true]);
    });
  });
});
