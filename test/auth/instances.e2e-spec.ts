import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { InvalidationBus } from '../../src/database/invalidation-bus.js';
import { createCollection } from '../intel/objects.helpers.js';
import { eventually } from '../support/eventually.js';
import { createKey, tokenFor } from '../support/factories.js';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';

/** Two instances of one deployment: key caches never outlive a revocation made through the other. */
describe('several instances on one database', () => {
  let a: TestApp;
  let b: TestApp;
  let db: pg.Pool;

  beforeAll(async () => {
    [a, b] = await createInstances(2);
    db = a.db;
  });
  afterAll(() => closeInstances([a, b]));

  const readResources = (app: TestApp, header: [string, string]) => app.http().get('/auth/resources').set(header[0], header[1]);

  it('accepts on one instance a token issued by the other', async () => {
    const { key } = await createKey(a, { permissions: [{ resource: 1, actions: ['Read'] }] });
    const token = await tokenFor(a, key);
    expect((await readResources(b, ['Authorization', `Bearer ${token}`])).status).toBe(200);
  });

  it('refuses on instance B a key and its token revoked through instance A', async () => {
    const { id, key } = await createKey(a, { permissions: [{ resource: 1, actions: ['Read'] }] });
    const token = await tokenFor(b, key);
    // B has the key cached now.
    expect((await readResources(b, ['X-Api-Key', key])).status).toBe(200);
    expect((await readResources(b, ['Authorization', `Bearer ${token}`])).status).toBe(200);

    expect((await a.http().post(`/auth/keys/${id}/revoked`).set('X-Api-Key', a.adminKey)).status).toBe(204);
    // A refuses at once; B as soon as the revocation's notification arrives.
    expect((await readResources(a, ['X-Api-Key', key])).status).toBe(401);
    await eventually(async () => (await readResources(b, ['X-Api-Key', key])).status === 401);
    expect((await readResources(b, ['Authorization', `Bearer ${token}`])).status).toBe(401);
  });

  it("reads on instance B with a key's ceiling changed through instance A", async () => {
    await createCollection(a, 'ceilings');
    const domain = (value: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });
    await a.intel.batch('ceilings', [domain('clear.example'), domain('amber.example')]).expect(200);
    await db.query(
      `UPDATE intel_object o SET was_tlp = o.tlp, api_tlp = 2
        WHERE EXISTS (SELECT 1 FROM intel_object_key k WHERE k.object_id = o.id AND k.value = 'amber.example')`,
    );
    const { id, key } = await createKey(a, { permissions: [{ resource: 2, actions: ['ReadChildren'] }] });
    const listed = async (app: TestApp) => ((await app.intel.as(key).get('/intel/collections/ceilings/objects').expect(200)).body as unknown[]).length;
    // B has the key cached now, with its ceiling.
    expect(await listed(b)).toBe(2);

    await a.auth.updateKey(id, { maxTLP: 'TLP:GREEN' }).expect(200);
    expect(await listed(a)).toBe(1);
    await eventually(async () => (await listed(b)) === 1);
  });

  it('stops trusting its cache the moment its invalidation listener is lost', async () => {
    const { id, key } = await createKey(a, { permissions: [{ resource: 1, actions: ['Read'] }] });
    expect((await readResources(b, ['X-Api-Key', key])).status).toBe(200);
    const epochs = [a, b].map((app) => app.app.get(InvalidationBus).currentEpoch);
    // Cut every listener connection (both instances'): notifications sent now would be lost.
    await db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'ids-invalidation'`,
    );
    // Both notice the loss (and drop their caches) before anything else happens.
    await eventually(async () => [a, b].every((app, i) => app.app.get(InvalidationBus).currentEpoch > epochs[i]));
    // Revoke behind the service's back: no notification at all.
    await db.query('UPDATE auth_api_key SET revoked_at = now() WHERE id = $1', [id]);
    // Both instances re-read the key while their listener is down or has just come back.
    expect((await readResources(b, ['X-Api-Key', key])).status).toBe(401);
    expect((await readResources(a, ['X-Api-Key', key])).status).toBe(401);
  });
});
