import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ROOT, taxiiClient } from '../support/clients/taxii.js';
import { STATEMENT_REF as STATEMENT, TLP1_REFS as TLP1, TLP2_REFS as TLP2 } from '../support/markings.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const RANKS = ['TLP:CLEAR', 'TLP:GREEN', 'TLP:AMBER', 'TLP:AMBER+STRICT', 'TLP:RED'];

const domain = (n: number) => `marked-${n}.example`;
const indicator = (n: number, refs?: string[]) => ({
  type: 'indicator',
  spec_version: '2.1',
  id: `indicator--${randomUUID()}`,
  created: '2026-01-01T00:00:00.000Z',
  modified: '2026-01-01T00:00:00.000Z',
  pattern: `[domain-name:value = '${domain(n)}']`,
  pattern_type: 'stix',
  valid_from: '2026-01-01T00:00:00Z',
  ...(refs !== undefined && { object_marking_refs: refs }),
});

/**
 * TAXII writes carry markings (extensions §19): each object's `object_marking_refs` (TLP 1.0 and 2.0, the
 * most restrictive of several, other marking definitions ignored), else the collection's `defaultTLP`;
 * marking definitions posted in an envelope are neither stored nor failures. Markings are read behind the
 * API (intel_object.tlp, intel_change.tlp).
 */
describe('TAXII writes: markings', () => {
  let t: TestApp;
  let taxiiId: string;
  const collection = 'taxii-marked';

  beforeAll(async () => {
    t = await createTestApp();
    expect((await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send({ schemaID: 'any', type: 'object' })).status).toBe(201);
    expect((await t.intel.createCollection({ name: collection, schemaID: 'any', defaultTLP: 'TLP:GREEN' })).status).toBe(201);
    const listed = await taxiiClient(t, t.adminKey).get(`${ROOT}/collections/`);
    taxiiId = (listed.body as { collections: { id: string; title: string }[] }).collections.find((c) => c.title === collection)!.id;
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (objects: unknown[]) => taxiiClient(t, t.adminKey).post(`${ROOT}/collections/${taxiiId}/objects/`, { objects });
  const markings = async () =>
    Object.fromEntries(
      (
        await t.db.query(`SELECT o.keys->0->>'value' AS value, o.tlp FROM intel_object o JOIN intel_collection c ON c.id = o.collection_id WHERE c.name = $1`, [
          collection,
        ])
      ).rows.map((row: { value: string; tlp: number }) => [row.value, RANKS[row.tlp]]),
    );
  const records = async () =>
    (
      await t.db.query(
        `SELECT ch.operation, ch.object->'keys'->0->>'value' AS value, ch.tlp, ch.was_tlp AS "wasTlp", ch.via FROM intel_change ch
           JOIN intel_collection c ON c.id = ch.collection_id WHERE c.name = $1 ORDER BY ch.id`,
        [collection],
      )
    ).rows.map((row: { operation: string; value: string; tlp: number; wasTlp: number | null; via: string }) => [
      row.operation,
      row.value,
      RANKS[row.tlp],
      row.wasTlp === null ? null : RANKS[row.wasTlp],
      row.via,
    ]);

  it("marks each object by its refs (TLP 1.0 and 2.0, the most restrictive of several), else the collection's defaultTLP; marking definitions are successes that store nothing", async () => {
    const objects = [
      { type: 'marking-definition', spec_version: '2.1', id: TLP2.AMBER, created: '2022-10-01T00:00:00.000Z', name: 'TLP:AMBER', extensions: {} },
      { type: 'marking-definition', spec_version: '2.1', id: STATEMENT, created: '2026-01-01T00:00:00.000Z', definition_type: 'statement', definition: {} },
      indicator(1, [TLP1.AMBER]),
      indicator(2, [TLP2.RED]),
      indicator(3, [TLP2.GREEN, TLP1.RED, STATEMENT]),
      indicator(4),
      indicator(5, [STATEMENT]),
      indicator(6, [TLP1.WHITE]),
    ];
    const response = await post(objects);
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'complete', total_count: 8, success_count: 8, failure_count: 0 });
    const expected = {
      [domain(1)]: 'TLP:AMBER',
      [domain(2)]: 'TLP:RED',
      [domain(3)]: 'TLP:RED',
      [domain(4)]: 'TLP:GREEN',
      [domain(5)]: 'TLP:GREEN',
      [domain(6)]: 'TLP:CLEAR',
    };
    expect(await markings()).toEqual(expected);
    expect(await records()).toEqual(Object.entries(expected).map(([value, tlp]) => ['Add', value, tlp, null, 'taxii']));
  });

  it('a later write with other refs re-marks the object (an Update), lower too; without refs it takes the defaultTLP again', async () => {
    const before = (await records()).length;
    expect((await post([indicator(1, [TLP2.RED])])).body).toMatchObject({ success_count: 1 });
    expect((await post([indicator(2, [TLP2.AMBER])])).body).toMatchObject({ success_count: 1 });
    expect((await post([indicator(3)])).body).toMatchObject({ success_count: 1 });
    expect(await markings()).toMatchObject({ [domain(1)]: 'TLP:RED', [domain(2)]: 'TLP:AMBER', [domain(3)]: 'TLP:GREEN' });
    expect((await records()).slice(before)).toEqual([
      ['Update', domain(1), 'TLP:RED', 'TLP:AMBER', 'taxii'],
      ['Update', domain(2), 'TLP:AMBER', 'TLP:RED', 'taxii'],
      ['Update', domain(3), 'TLP:GREEN', 'TLP:RED', 'taxii'],
    ]);
  });

  it('a STIX bundle file on the native API is marked the same way', async () => {
    const bundle = { type: 'bundle', id: `bundle--${randomUUID()}`, objects: [indicator(7, [TLP1.RED]), indicator(8)] };
    const response = await t.http().post(`/intel/collections/${collection}/objects/stix-bundle`).set('X-Api-Key', t.adminKey).send(bundle);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ added: 2, failed: 0 });
    expect(await markings()).toMatchObject({ [domain(7)]: 'TLP:RED', [domain(8)]: 'TLP:GREEN' });
  });
});
