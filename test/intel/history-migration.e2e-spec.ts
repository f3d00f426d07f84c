import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { upgradedDatabase } from '../support/migrations.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Entry {
  operation: string;
  at: string;
}

/**
 * Objects stored before the api claim was recorded (migration ObjectHistoryAndApiClaim): written through
 * the API, the migration is reverted (with any after it) and applied again over that data. Their claim
 * starts at their first add and ends at their last change record.
 */
describe('upgrading a database with objects to the api claim', () => {
  let databaseUrl: string;
  let t: TestApp | undefined;

  beforeAll(async () => {
    databaseUrl = await upgradedDatabase({ table: 'intel_object', column: 'api_first_seen_at' }, async (before) => {
      const admin = () => before.http();
      await admin().post('/intel/schemas').set('X-Api-Key', before.adminKey).send({ schemaID: 'any', type: 'object' });
      expect((await admin().post('/intel/collections').set('X-Api-Key', before.adminKey).send({ name: 'old', schemaID: 'any' })).status).toBe(201);
      for (const n of [1, 2]) {
        const form = { type: 'DomainName', keys: [{ type: 'DomainName', value: 'a.example' }], context: { n } };
        expect((await admin().post('/intel/collections/old/objects').set('X-Api-Key', before.adminKey).send(form)).status).toBe(204);
      }
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('claims existing objects for the api from their first add to their last change', async () => {
    t = await createTestApp({ DATABASE_URL: databaseUrl });
    const query = 'objectKeyType=DomainName&objectKey=a.example';
    const history = await t.http().get(`/intel/collections/old/objects/history?${query}`).set('X-Api-Key', t.adminKey);
    const [update, add] = history.body as Entry[];
    expect([update.operation, add.operation]).toEqual(['Update', 'Add']);
    const provenance = await t.http().get(`/intel/collections/old/objects/provenance?${query}`).set('X-Api-Key', t.adminKey);
    expect(provenance.body).toEqual({
      claims: [{ origin: 'api', source: null, firstSeenAt: add.at, lastSeenAt: update.at }],
      sightings: null,
      warnings: [],
      score: 50,
    });
  });
});
