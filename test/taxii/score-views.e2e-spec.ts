import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { v5 as uuidv5 } from 'uuid';
import { ROOT, taxiiClient } from '../support/clients/taxii.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { resourceIdOf } from './taxii-support.js';

type Stix = Record<string, unknown> & { type: string; id: string; pattern?: string; valid_until?: string };
type TaxiiCollection = { id: string; title: string; alias: string; can_read: boolean; can_write: boolean };

const ip = (value: string) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value }], context: {} });
const HOUR = 3_600_000;

/**
 * TAXII views (extensions §18): each `taxiiViews` item a read-only TAXII collection of its own (a stable id,
 * `can_write: false`) serving the objects scoring at least `minScore` now, each indicator valid until the
 * earlier of its expiry and the time its score falls below the bound.
 *
 * Scores: api claims of an F key (strength 50) and of an A key (75); IP addresses decay over 0.2 days (4.8 h)
 * at speed 1. The view's bound 40: a fresh F object (50) falls below it (< 39.5) 4.8 h × 10.5/50 ≈ 1.008 h
 * after its anchor; an F object anchored two hours back (≈ 29) is out of the view.
 */
describe('TAXII views of a collection', () => {
  let t: TestApp;
  let collectionId: string;
  let viewId: string;

  beforeAll(async () => {
    t = await createTestApp();
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', schemaID: 'view-any', title: 'any', type: 'object' };
    expect((await t.intel.createSchema(schema)).status).toBe(201);
    const scoring = { decay: { IPAddress: { lifetimeDays: 0.2, speed: 1 } }, taxiiViews: [{ alias: 'sv-high', minScore: 40 }] };
    expect((await t.intel.createCollection({ name: 'sv', schemaID: 'view-any', scoring })).status).toBe(201);
    expect((await t.intel.createCollection({ name: 'sv-other', schemaID: 'view-any' })).status).toBe(201);
    for (const value of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) expect((await t.intel.add('sv', ip(value))).status).toBe(204);
    // 192.0.2.3's api claim as an A key's re-send would leave it (rank 5, src/scoring/admiralty.ts).
    await t.db.query(`UPDATE intel_object SET api_reliability = 5 WHERE keys->0->>'value' = '192.0.2.3'`);
    // Simulates two hours passing since 192.0.2.2's api claim was last seen.
    await t.db.query(`UPDATE intel_object SET api_last_seen_at = now() - interval '2 hours' WHERE keys->0->>'value' = '192.0.2.2'`);
    const [{ taxii_id }] = (await t.db.query(`SELECT taxii_id FROM intel_collection WHERE name = 'sv'`)).rows as { taxii_id: string }[];
    collectionId = taxii_id;
    viewId = uuidv5('sv-high', collectionId);
  });
  afterAll(async () => {
    await t.close();
  });

  const valueOf = (indicator: Stix) => /'([^']+)'/.exec(indicator.pattern as string)![1];

  it('is listed as a read-only collection with a stable id (UUIDv5 of the collection and the alias), for keys that may read it', async () => {
    const admin = taxiiClient(t, t.adminKey);
    const listed = (await admin.get(`${ROOT}/collections/`)).body as { collections: TaxiiCollection[] };
    const view = listed.collections.find((collection) => collection.alias === 'sv-high');
    expect(view).toEqual({
      id: viewId,
      title: 'sv-high',
      description: expect.any(String),
      alias: 'sv-high',
      can_read: true,
      can_write: false,
      media_types: ['application/stix+json;version=2.1'],
    });
    expect((await admin.get(`${ROOT}/collections/${viewId}/`)).body).toEqual(view);

    // A PATCH that keeps the alias keeps the id.
    const tag = (await t.intel.collection('sv')).headers.etag as string;
    const scoring = { decay: { IPAddress: { lifetimeDays: 0.2, speed: 1 } }, threshold: 5, taxiiViews: [{ alias: 'sv-high', minScore: 40 }] };
    expect((await t.intel.updateCollection('sv', { scoring }, tag)).status).toBe(204);
    expect(((await admin.get(`${ROOT}/collections/`)).body as { collections: TaxiiCollection[] }).collections.find((c) => c.alias === 'sv-high')!.id).toBe(
      viewId,
    );

    const reader = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, 'sv'), actions: ['Read'] }] });
    const readerSees = ((await taxiiClient(t, reader.key).get(`${ROOT}/collections/`)).body as { collections: TaxiiCollection[] }).collections;
    expect(readerSees.map((c) => c.alias).sort()).toEqual(['sv', 'sv-high']);
    const stranger = await createKey(t, { permissions: [{ resource: await resourceIdOf(t, 'sv-other'), actions: ['Read', 'Write'] }] });
    const strangerSees = ((await taxiiClient(t, stranger.key).get(`${ROOT}/collections/`)).body as { collections: TaxiiCollection[] }).collections;
    expect(strangerSees.map((c) => c.alias)).toEqual(['sv-other']);
    expect((await taxiiClient(t, stranger.key).get(`${ROOT}/collections/${viewId}/objects/`)).status).toBe(403);
  });

  it('serves the objects scoring at least minScore now, valid until their score falls below it; objects, manifest and by id agree', async () => {
    const client = taxiiClient(t, t.adminKey);
    const before = Date.now();
    const response = await client.get(`${ROOT}/collections/${viewId}/objects/?match[type]=indicator`);
    expect(response.status).toBe(200);
    const indicators = (response.body as { objects: Stix[] }).objects;
    expect(indicators.map(valueOf).sort()).toEqual(['192.0.2.1', '192.0.2.3']);
    const byValue = Object.fromEntries(indicators.map((indicator) => [valueOf(indicator), indicator]));
    // F (50): below 40 about 1.008 h after its anchor (its add, just before).
    const fUntil = Date.parse(byValue['192.0.2.1'].valid_until!);
    expect(fUntil).toBeGreaterThan(before + 0.95 * HOUR);
    expect(fUntil).toBeLessThan(before + 1.05 * HOUR);
    // A (75): 4.8 h × (1 − 39.5/75) ≈ 2.27 h.
    const aUntil = Date.parse(byValue['192.0.2.3'].valid_until!);
    expect(aUntil).toBeGreaterThan(before + 2.2 * HOUR);
    expect(aUntil).toBeLessThan(before + 2.35 * HOUR);
    expect(byValue['192.0.2.1'].confidence).toBe(50);
    expect(byValue['192.0.2.3'].confidence).toBe(75);

    // The plain collection serves all three, without a view's valid_until.
    const plain = (await client.get(`${ROOT}/collections/${collectionId}/objects/?match[type]=indicator`)).body as { objects: Stix[] };
    expect(plain.objects.map(valueOf).sort()).toEqual(['192.0.2.1', '192.0.2.2', '192.0.2.3']);
    expect(plain.objects.every((indicator) => indicator.valid_until === undefined)).toBe(true);

    const manifest = (await client.get(`${ROOT}/collections/${viewId}/manifest/?match[type]=indicator`)).body as { objects: { id: string }[] };
    expect(manifest.objects.map((record) => record.id).sort()).toEqual(indicators.map((indicator) => indicator.id).sort());
    const decayed = plain.objects.find((indicator) => valueOf(indicator) === '192.0.2.2')!;
    expect((await client.get(`${ROOT}/collections/${viewId}/objects/${decayed.id}/`)).status).toBe(404);
    expect((await client.get(`${ROOT}/collections/${viewId}/objects/${byValue['192.0.2.1'].id}/`)).status).toBe(200);
  });

  it('refuses writes: 403 for a POST and a DELETE, nothing changed', async () => {
    const client = taxiiClient(t, t.adminKey);
    const indicator = ((await client.get(`${ROOT}/collections/${viewId}/objects/?match[type]=indicator`)).body as { objects: Stix[] }).objects[0];
    const posted = await client.post(`${ROOT}/collections/${viewId}/objects/`, {
      objects: [{ type: 'ipv4-addr', spec_version: '2.1', id: 'ipv4-addr--ff26c055-6336-5bc5-b98d-13d6226742dd', value: '198.51.100.9' }],
    });
    expect(posted.status).toBe(403);
    expect((await client.delete(`${ROOT}/collections/${viewId}/objects/${indicator.id}/`)).status).toBe(403);
    expect(((await t.intel.objects('sv', '?limit=100')).body as unknown[]).length).toBe(3);
  });
});
