import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey, tokenFor } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('tokens (GET /auth/token) and credentials', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const readKeys = (auth: { bearer?: string; key?: string }) => {
    const request = t.http().get('/auth/keys');
    if (auth.bearer !== undefined) request.set('Authorization', `Bearer ${auth.bearer}`);
    if (auth.key !== undefined) request.set('X-Api-Key', auth.key);
    return request;
  };

  it('issues {accessToken, tokenType: "Bearer", expiresIn: int} for a valid key, as the SDK asks for it', async () => {
    const { key } = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
    // Exactly the SDK's token request: X-Api-Key, X-Api-Version, User-Agent; no Accept, no body.
    const response = await t.http().get('/auth/token').set('X-Api-Key', key).set('X-Api-Version', '1').set('User-Agent', 'cybsi-cloud-client/v1.1.4');
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['accessToken', 'expiresIn', 'tokenType']);
    expect(response.body.tokenType).toBe('Bearer');
    expect(typeof response.body.accessToken).toBe('string');
    expect(response.body.accessToken.length).toBeGreaterThan(10);
    expect(Number.isInteger(response.body.expiresIn)).toBe(true);
    expect(response.body.expiresIn).toBeGreaterThan(3500);
    expect(response.body.expiresIn).toBeLessThanOrEqual(3600);
  });

  it("lets the token authenticate other endpoints with the key's permissions", async () => {
    const reader = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
    const token = await tokenFor(t, reader.key);
    const response = await readKeys({ bearer: token });
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    // The token carries exactly the key's rights: no Write on auth.
    const write = await t.http().post('/auth/keys').set('Authorization', `Bearer ${token}`).send({ permissions: [] });
    expectError(write, 'MissingPermissions');
    // "bearer" in any case, as RFC 6750 allows.
    expect((await t.http().get('/auth/keys').set('Authorization', `bearer ${token}`)).status).toBe(200);
  });

  it('issues a token to a key without any permission (the token endpoint needs only a valid key)', async () => {
    const { key } = await createKey(t, { permissions: [] });
    const response = await t.http().get('/auth/token').set('X-Api-Key', key);
    expect(response.status).toBe(200);
    expectError(await readKeys({ bearer: response.body.accessToken }), 'MissingPermissions');
  });

  it('accepts the key directly in X-Api-Key on any endpoint', async () => {
    const reader = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
    expect((await readKeys({ key: reader.key })).status).toBe(200);
  });

  it.each([
    ['no credentials', {}],
    ['an unknown key', { key: 'x'.repeat(43) }],
    ['an overlong key', { key: 'k'.repeat(5000) }],
  ])('GET /auth/token with %s → 401 Unauthorized', async (_name, auth: { key?: string }) => {
    const request = t.http().get('/auth/token');
    if (auth.key) request.set('X-Api-Key', auth.key);
    expectError(await request, 'Unauthorized');
  });

  it('GET /auth/token with only a bearer token → 401 (tokens do not mint tokens)', async () => {
    const token = await tokenFor(t, t.adminKey);
    expectError(await t.http().get('/auth/token').set('Authorization', `Bearer ${token}`), 'Unauthorized');
  });

  it.each([
    ['garbage', 'garbage'],
    ['dots only', '...'],
    ['a token-shaped forgery', `1.99999999999.${'A'.repeat(43)}`],
    ['a very long value', 'a'.repeat(10_000)],
  ])('a bearer token of %s → 401 Unauthorized, never 403', async (_name, token) => {
    expectError(await readKeys({ bearer: token }), 'Unauthorized');
  });

  it('a tampered token (other key id or later expiry, same signature) → 401', async () => {
    const reader = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
    const token = await tokenFor(t, reader.key);
    const [keyId, expiresAt, signature] = token.split('.');
    expect(signature).toBeDefined();
    expectError(await readKeys({ bearer: `1.${expiresAt}.${signature}` }), 'Unauthorized');
    expectError(await readKeys({ bearer: `${keyId}.${Number(expiresAt) + 1000}.${signature}` }), 'Unauthorized');
    expectError(await readKeys({ bearer: `${token}x` }), 'Unauthorized');
  });

  it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Token abc'])('an Authorization header %p → 401 Unauthorized', async (header) => {
    expectError(await t.http().get('/auth/keys').set('Authorization', header), 'Unauthorized');
  });

  it('revoking a key invalidates its tokens at once', async () => {
    const reader = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
    const token = await tokenFor(t, reader.key);
    expect((await readKeys({ bearer: token })).status).toBe(200);
    expect((await t.http().post(`/auth/keys/${reader.id}/revoked`).set('X-Api-Key', t.adminKey)).status).toBe(204);
    expectError(await readKeys({ bearer: token }), 'Unauthorized');
    expectError(await readKeys({ key: reader.key }), 'Unauthorized');
    expectError(await t.http().get('/auth/token').set('X-Api-Key', reader.key), 'Unauthorized');
  });

  it('an expired key is refused for both the key and its tokens', async () => {
    // Whole seconds ahead, as the SDK sends timestamps; at least 2 s so the setup requests fit.
    const expiresAt = new Date(Math.ceil((Date.now() + 2_000) / 1000) * 1000);
    const reader = await createKey(t, {
      permissions: [{ resource: 1, actions: ['Read'] }],
      expiresAt: expiresAt.toISOString().replace('.000Z', 'Z'),
    });
    const issued = await t.http().get('/auth/token').set('X-Api-Key', reader.key);
    expect(issued.status).toBe(200);
    // The token never outlives its key.
    expect(issued.body.expiresIn).toBeLessThanOrEqual(3);
    const token = issued.body.accessToken as string;
    expect((await readKeys({ bearer: token })).status).toBe(200);

    await sleep(Math.max(0, expiresAt.getTime() - Date.now()) + 150);

    expectError(await readKeys({ key: reader.key }), 'Unauthorized');
    expectError(await readKeys({ bearer: token }), 'Unauthorized');
    expectError(await t.http().get('/auth/token').set('X-Api-Key', reader.key), 'Unauthorized');
  });

  describe('token lifetime', () => {
    let short: TestApp;
    beforeAll(async () => {
      short = await createTestApp({ TOKEN_TTL_SECONDS: '1' });
    });
    afterAll(async () => {
      await short.close();
    });

    it('an expired token → 401 (the client then refreshes), and a fresh token works again', async () => {
      const issued = await short.http().get('/auth/token').set('X-Api-Key', short.adminKey);
      expect(issued.status).toBe(200);
      expect(issued.body.expiresIn).toBeLessThanOrEqual(1);
      // Wait the token out (a functional wait, not a timing assertion).
      await sleep(1_100);
      const expired = await short.http().get('/auth/keys').set('Authorization', `Bearer ${issued.body.accessToken}`);
      expectError(expired, 'Unauthorized');
      // Expiry is in whole seconds, so a 1 s token lives until the next second starts: issue the fresh one
      // just after a second begins, so that it is valid for nearly all of it however busy the machine is.
      await sleep(1_000 - (Date.now() % 1_000) + 20);
      const fresh = await tokenFor(short, short.adminKey);
      expect((await short.http().get('/auth/keys').set('Authorization', `Bearer ${fresh}`)).status).toBe(200);
    });

    it("tokens are bound to the database secret: another app's token is refused", async () => {
      const foreign = await tokenFor(short, short.adminKey);
      expectError(await readKeys({ bearer: foreign }), 'Unauthorized');
    });
  });
});
