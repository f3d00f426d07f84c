import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface KeyView {
  id: number;
  prefix: string | null;
  lastUsedAt: string | null;
  lastUsedAddress: string | null;
  allowedNetworks: string[] | null;
}

interface Usage {
  day: string;
  resetSeconds: number;
  requestLimits: { target: { resource: { id: number }; action: string }; limit: number; period: string; used: number; remaining: number }[];
}

/**
 * Three instances of one deployment: `direct` (clients connect to it themselves), `proxied` (behind a proxy at
 * 127.0.0.1, whose X-Forwarded-For it trusts) and `elsewhere` (trusts a proxy at another address, so the
 * header of its actual peer is ignored).
 */
describe('key hygiene: prefix, last address, allowed networks, usage', () => {
  let direct: TestApp;
  let proxied: TestApp;
  let elsewhere: TestApp;

  beforeAll(async () => {
    direct = await createTestApp();
    proxied = await createTestApp({ TRUST_PROXY: '127.0.0.1' }, direct);
    elsewhere = await createTestApp({ TRUST_PROXY: '10.0.0.1' }, direct);
  });
  afterAll(async () => {
    await elsewhere.close();
    await proxied.close();
    await direct.close();
  });

  async function viewOf(id: number): Promise<KeyView> {
    const response = await direct.http().get('/auth/keys?limit=1000').set('X-Api-Key', direct.adminKey);
    expect(response.status).toBe(200);
    return (response.body as KeyView[]).find((key) => key.id === id)!;
  }

  const createForm = (body: object) => direct.http().post('/auth/keys').set('X-Api-Key', direct.adminKey).send(body);
  const readAs = (app: TestApp, headers: Record<string, string>) => {
    const call = app.http().get('/intel/collections');
    for (const [name, value] of Object.entries(headers)) call.set(name, value);
    return call;
  };

  it('shows the first 8 characters of a new key, none for the ADMIN_API_KEY key, and the address of the last use', async () => {
    const key = await createKey(direct, { permissions: [{ resource: 2, actions: ['ReadChildren'] }] });
    const fresh = await viewOf(key.id);
    expect(fresh).toMatchObject({ prefix: key.key.slice(0, 8), lastUsedAt: null, lastUsedAddress: null, allowedNetworks: null });
    const admin = (await direct.http().get('/auth/keys?limit=1').set('X-Api-Key', direct.adminKey)).body as KeyView[];
    expect(admin[0].prefix).toBeNull();

    await readAs(direct, { 'X-Api-Key': key.key }).expect(200);
    expect(await viewOf(key.id)).toMatchObject({ lastUsedAddress: '127.0.0.1' });
    // Another address is written at once, not a minute later.
    await readAs(proxied, { 'X-Api-Key': key.key, 'X-Forwarded-For': '203.0.113.9' }).expect(200);
    expect(await viewOf(key.id)).toMatchObject({ lastUsedAddress: '203.0.113.9' });
    // An X-Forwarded-For from a peer that is not a trusted proxy is ignored.
    await readAs(elsewhere, { 'X-Api-Key': key.key, 'X-Forwarded-For': '198.51.100.4' }).expect(200);
    expect(await viewOf(key.id)).toMatchObject({ lastUsedAddress: '127.0.0.1' });
    await readAs(direct, { 'X-Api-Key': key.key, 'X-Forwarded-For': '198.51.100.4' }).expect(200);
    expect(await viewOf(key.id)).toMatchObject({ lastUsedAddress: '127.0.0.1' });
  });

  it('refuses a key, and its tokens, from outside its allowed networks with the 401 of an unknown key', async () => {
    const created = await createForm({
      permissions: [{ resource: { id: 2 }, actions: ['ReadChildren'] }],
      allowedNetworks: ['203.0.113.0/24', '2001:db8::/32'],
    }).expect(201);
    const key = (created.body as { id: number; key: string }).key;
    expect(await viewOf((created.body as { id: number }).id)).toMatchObject({ allowedNetworks: ['203.0.113.0/24', '2001:db8::/32'] });
    const unknown = await readAs(direct, { 'X-Api-Key': 'no-such-key' });

    // Directly from 127.0.0.1: outside, whatever X-Forwarded-For claims.
    const outside = await readAs(direct, { 'X-Api-Key': key });
    expectError(outside, 'Unauthorized');
    expect(outside.body).toEqual(unknown.body);
    expectError(await readAs(direct, { 'X-Api-Key': key, 'X-Forwarded-For': '203.0.113.5' }), 'Unauthorized');
    expectError(await readAs(elsewhere, { 'X-Api-Key': key, 'X-Forwarded-For': '203.0.113.5' }), 'Unauthorized');
    expectError(await direct.http().get('/auth/token').set('X-Api-Key', key), 'Unauthorized');
    // Through the trusted proxy, the client's own address counts.
    await readAs(proxied, { 'X-Api-Key': key, 'X-Forwarded-For': '203.0.113.5' }).expect(200);
    await readAs(proxied, { 'X-Api-Key': key, 'X-Forwarded-For': '2001:db8::17' }).expect(200);
    expectError(await readAs(proxied, { 'X-Api-Key': key, 'X-Forwarded-For': '198.51.100.4' }), 'Unauthorized');

    const issued = await proxied.http().get('/auth/token').set('X-Api-Key', key).set('X-Forwarded-For', '203.0.113.5');
    expect(issued.status).toBe(200);
    const bearer = `Bearer ${(issued.body as { accessToken: string }).accessToken}`;
    await readAs(proxied, { Authorization: bearer, 'X-Forwarded-For': '203.0.113.77' }).expect(200);
    expectError(await readAs(proxied, { Authorization: bearer, 'X-Forwarded-For': '198.51.100.4' }), 'Unauthorized');
    expectError(await readAs(direct, { Authorization: bearer }), 'Unauthorized');

    // A key restricted to the loopback network works directly.
    const local = await createForm({ permissions: [{ resource: { id: 2 }, actions: ['ReadChildren'] }], allowedNetworks: ['127.0.0.0/8'] }).expect(201);
    await readAs(direct, { 'X-Api-Key': (local.body as { key: string }).key }).expect(200);

    // The refusals are audited as 401 without a key id, from the client's address.
    const refused = await direct.http().post('/intel/collections').set('X-Api-Key', key).set('X-Request-Id', 'net-refused').send({});
    expectError(refused, 'Unauthorized');
    const rows = await direct.db.query('SELECT key_id, status, address FROM audit_entry WHERE request_id = $1', ['net-refused']);
    expect(rows.rows).toEqual([{ key_id: null, status: 401, address: '127.0.0.1' }]);
    const proxiedWrite = await proxied
      .http()
      .post('/intel/collections')
      .set('X-Api-Key', key)
      .set('X-Forwarded-For', '203.0.113.5')
      .set('X-Request-Id', 'net-proxied')
      .send({});
    expectError(proxiedWrite, 'MissingPermissions');
    const proxiedRows = await direct.db.query('SELECT status, address FROM audit_entry WHERE request_id = $1', ['net-proxied']);
    expect(proxiedRows.rows).toEqual([{ status: 403, address: '203.0.113.5' }]);
  });

  it.each([
    ['not a CIDR', ['10.0.0.1']],
    ['a prefix too long', ['10.0.0.0/33']],
    ['an IPv6 prefix too long', ['2001:db8::/129']],
    ['a name', ['example.com/8']],
    ['an empty list', []],
    ['101 entries', Array.from({ length: 101 }, (_, index) => `10.0.${index}.0/24`)],
    ['a number', [10]],
  ])('refuses allowedNetworks with %s: 400 InvalidData', async (_name, allowedNetworks) => {
    expectError(await createForm({ permissions: [], allowedNetworks }), 'InvalidData');
  });

  it("counts today's requests per limit exactly, for concurrent requests through two instances", async () => {
    const key = await createKey(direct, {
      permissions: [
        { resource: 2, actions: ['ReadChildren', 'WriteChildren'] },
        { resource: 1, actions: ['Read'] },
      ],
      limits: [
        { resource: 2, action: 'ReadChildren', limit: 1000 },
        { resource: 1, action: 'Read', limit: 50 },
      ],
    });
    await direct.http().post('/intel/schemas').set('X-Api-Key', direct.adminKey).send({ schemaID: 'any', type: 'object' }).expect(201);
    await direct.http().post('/intel/collections').set('X-Api-Key', direct.adminKey).send({ name: 'counted', schemaID: 'any' }).expect(201);
    const usage = async (app: TestApp) => {
      const response = await app.http().get(`/auth/keys/${key.id}/usage`).set('X-Api-Key', direct.adminKey);
      expect(response.status).toBe(200);
      return response.body as Usage;
    };
    const before = await usage(direct);
    expect(before.requestLimits.map((limit) => [limit.target.resource.id, limit.target.action, limit.used, limit.remaining])).toEqual([
      [2, 'ReadChildren', 0, 1000],
      [1, 'Read', 0, 50],
    ]);
    expect(before.day).toBe(new Date().toISOString().slice(0, 10));

    const reads = Array.from({ length: 90 }, (_, index) =>
      fetch(`${(index % 2 === 0 ? direct : proxied).url}/intel/collections/counted`, { headers: { 'X-Api-Key': key.key } }),
    );
    const statuses = (await Promise.all(reads)).map((response) => response.status);
    expect(statuses).toEqual(statuses.map(() => 200));
    // The usage route itself counts under Read on auth when the caller is this key.
    for (const app of [direct, proxied]) {
      const counts = await usage(app);
      expect(counts.requestLimits.map((limit) => [limit.used, limit.remaining])).toEqual([
        [90, 910],
        [0, 50],
      ]);
    }
    const own = await direct.http().get(`/auth/keys/${key.id}/usage`).set('X-Api-Key', key.key);
    expect(own.status).toBe(200);
    expect((own.body as Usage).requestLimits[1].used).toBe(1);
  });

  it('answers usage of an unknown key 404, a malformed id 400, and only with Read on auth', async () => {
    expectError(await direct.http().get('/auth/keys/99999/usage').set('X-Api-Key', direct.adminKey), 'NotFound');
    expectError(await direct.http().get('/auth/keys/x/usage').set('X-Api-Key', direct.adminKey), 'InvalidPathArgument');
    const writer = await createKey(direct, { permissions: [{ resource: 1, actions: ['Write'] }] });
    expectError(await direct.http().get(`/auth/keys/${writer.id}/usage`).set('X-Api-Key', writer.key), 'MissingPermissions');
  });
});
