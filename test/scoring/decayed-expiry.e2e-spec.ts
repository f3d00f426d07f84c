import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExpiryService } from '../../src/intel/expiry.service.js';
import { listAll } from '../intel/objects.helpers.js';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';

const ip = (value: string, context: Record<string, unknown> = {}) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value }], context });

/**
 * `decayedAction: expire` (extensions §18): the expiry job removes the objects whose score is below the
 * collection's threshold, each exactly once across instances, as a `Remove` with reason `Decayed`; an input
 * that lifted the score back before the job ran keeps the object; objects above the threshold, and decayed
 * objects of `keep` collections, stay.
 *
 * Scores here: an api claim of an F key is strength 50 (base 50); IP addresses decay over 0.2 days (4.8 hours)
 * at speed 1, so an anchor two hours back leaves 50 × (1 − 2/4.8) ≈ 29, below the threshold 40.
 */
describe('decayed objects removed by the expiry job', () => {
  let apps: TestApp[];
  let a: TestApp;

  beforeAll(async () => {
    // The job never runs by itself here: the test runs it, on the three instances at once.
    apps = await createInstances(3, { EXPIRY_INTERVAL_SECONDS: '3600' });
    [a] = apps;
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', schemaID: 'decay-any', title: 'any', type: 'object' };
    expect((await a.intel.createSchema(schema)).status).toBe(201);
  });
  afterAll(() => closeInstances(apps));

  const scoring = (decayedAction: string) => ({ decay: { IPAddress: { lifetimeDays: 0.2, speed: 1 } }, threshold: 40, decayedAction });
  /** Simulates two hours passing since the objects' api claims were last seen (no other anchor is set here). */
  const ageTwoHours = (collection: string, values: string[]) =>
    a.db.query(
      `UPDATE intel_object SET api_last_seen_at = now() - interval '2 hours'
        WHERE collection_id = (SELECT id FROM intel_collection WHERE name = $1) AND keys->0->>'value' = ANY($2::text[])`,
      [collection, values],
    );
  const runJobOnAll = () => Promise.all(apps.map((app) => app.app.get(ExpiryService).expireDue()));
  const changesAfter = async (collection: string, cursor: string) => {
    const response = await a.intel.changes(collection, `?cursor=${cursor}&limit=1000`);
    expect(response.status).toBe(200);
    return response.body as { operation: string; reason?: string; object: { keys: { value: string }[] } }[];
  };

  it('each decayed object gets exactly one Remove (Decayed) across three instances; lifted, fresh and kept objects stay', async () => {
    expect((await a.intel.createCollection({ name: 'dec', schemaID: 'decay-any', scoring: scoring('expire') })).status).toBe(201);
    expect((await a.intel.createCollection({ name: 'dec-keep', schemaID: 'decay-any', scoring: scoring('keep') })).status).toBe(201);
    const decayed = Array.from({ length: 60 }, (_, i) => `10.0.${Math.floor(i / 200)}.${(i % 200) + 1}`);
    const lifted = ['10.9.0.1', '10.9.0.2'];
    const fresh = '10.8.0.1';
    expect(
      (
        await a.intel.batch(
          'dec',
          [...decayed, ...lifted, fresh].map((value) => ip(value)),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await a.intel.batch(
          'dec-keep',
          decayed.slice(0, 5).map((value) => ip(value)),
        )
      ).status,
    ).toBe(200);
    const { changesCursor } = await listAll(a, 'dec', 1000);
    const keepCursor = (await listAll(a, 'dec-keep', 1000)).changesCursor;
    await ageTwoHours('dec', [...decayed, ...lifted]);
    await ageTwoHours('dec-keep', decayed.slice(0, 5));
    // Lifted back before the job runs: a sighting (its time anchors the score), and an update re-anchoring the api claim.
    expect((await a.sightings.record([{ type: 'IPAddress', value: lifted[0], source: 'siem/one' }])).body).toEqual([{ status: 'Recorded' }]);
    expect((await a.intel.add('dec', ip(lifted[1], { note: 'seen again' }))).status).toBe(204);

    await runJobOnAll();
    await runJobOnAll();

    const changes = await changesAfter('dec', changesCursor);
    const removes = changes.filter((change) => change.operation === 'Remove');
    expect(removes.every((change) => change.reason === 'Decayed')).toBe(true);
    expect(removes.map((change) => change.object.keys[0].value).sort()).toEqual([...decayed].sort());
    const remaining = (await listAll(a, 'dec', 1000)).objects.map((object) => object.keys[0].value).sort();
    expect(remaining).toEqual([...lifted, fresh].sort());

    // The history of a decayed object ends with its one Remove (Decayed).
    const history = await a.intel.history('dec', `?objectKeyType=IPAddress&objectKey=${decayed[0]}`);
    expect(history.status).toBe(200);
    const entries = history.body as { operation: string; reason: string | null }[];
    expect(entries.filter((entry) => entry.operation === 'Remove')).toEqual([expect.objectContaining({ operation: 'Remove', reason: 'Decayed' })]);

    // A `keep` collection keeps its decayed objects.
    expect(await changesAfter('dec-keep', keepCursor)).toEqual([]);
    expect((await listAll(a, 'dec-keep', 1000)).objects).toHaveLength(5);
    const [{ n }] = (await a.db.query(`SELECT count(*)::int AS n FROM intel_change WHERE reason = 'Decayed'`)).rows as { n: number }[];
    expect(n).toBe(decayed.length);
  });

  it('a collection switched to expire later, and more objects than one batch: each removed once', async () => {
    expect((await a.intel.createCollection({ name: 'dec-many', schemaID: 'decay-any', scoring: scoring('keep') })).status).toBe(201);
    const values = Array.from({ length: 4500 }, (_, i) => `10.${20 + Math.floor(i / 250)}.${Math.floor((i % 250) / 250)}.${(i % 250) + 1}`);
    for (let i = 0; i < values.length; i += 1000) {
      expect(
        (
          await a.intel.batch(
            'dec-many',
            values.slice(i, i + 1000).map((value) => ip(value)),
          )
        ).status,
      ).toBe(200);
    }
    const { changesCursor } = await listAll(a, 'dec-many', 1000);
    // Every other one decayed; the rest stay above the threshold.
    await ageTwoHours(
      'dec-many',
      values.filter((_, i) => i % 2 === 0),
    );
    await runJobOnAll();
    expect(await changesAfter('dec-many', changesCursor)).toEqual([]);

    expect((await a.intel.updateCollection('dec-many', { scoring: scoring('expire') }, '"1"')).status).toBe(204);
    await runJobOnAll();
    await runJobOnAll();
    const [{ removed, distinct }] = (
      await a.db.query(
        `SELECT count(*)::int AS removed, count(DISTINCT object->'keys'->0->>'value')::int AS distinct FROM intel_change
          WHERE collection_id = (SELECT id FROM intel_collection WHERE name = 'dec-many') AND operation = 'Remove' AND reason = 'Decayed'`,
      )
    ).rows as { removed: number; distinct: number }[];
    expect({ removed, distinct }).toEqual({ removed: 2250, distinct: 2250 });
    expect((await listAll(a, 'dec-many', 1000)).objects).toHaveLength(2250);
  }, 120_000);
});
