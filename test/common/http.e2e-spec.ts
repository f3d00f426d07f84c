import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('common HTTP behaviour', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('error model', () => {
    it('answers an unknown route with a JSON 404 NotFound, with or without credentials', async () => {
      expectError(await t.http().get('/no/such/route'), 'NotFound');
      expectError(await t.http().get('/auth/nothing-here').set('X-Api-Key', t.adminKey), 'NotFound');
      expectError(await t.http().delete('/auth/keys').set('X-Api-Key', t.adminKey), 'NotFound');
    });

    it('answers malformed JSON with a JSON 400', async () => {
      const response = await t.auth.postAs('application/json', '/auth/keys', '{"permissions": [');
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body.code).toBe('InvalidData');
      expect(JSON.stringify(response.body)).not.toMatch(/at .*\.js|node_modules|SyntaxError/);
    });

    it('answers malformed JSON without credentials with a JSON 4xx, never 500', async () => {
      const response = await t.http().post('/auth/keys').set('Content-Type', 'application/json').send('{');
      expect([400, 401]).toContain(response.status);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
    });

    it('answers a JSON body above 16 MiB with a JSON 413 RequestEntityTooLarge', async () => {
      const big = JSON.stringify({ description: 'x'.repeat(16 * 1024 * 1024 + 10), permissions: [] });
      const response = await t.auth.postAs('application/json', '/auth/keys', big);
      expectError(response, 'RequestEntityTooLarge');
    });

    it('accepts a JSON body just below the limit as far as the body parser is concerned', async () => {
      // 1 MiB description: parsed, then refused by validation (MaxLength), not by the parser.
      const response = await t
        .http()
        .post('/auth/keys')
        .set('X-Api-Key', t.adminKey)
        .send({ description: 'x'.repeat(1024 * 1024), permissions: [] });
      expectError(response, 'InvalidData');
    });

    it.each([
      ['an array body', [{ permissions: [] }]],
      ['a string body', '"text"'],
      ['a number body', '42'],
      ['null', 'null'],
    ])('refuses %s with 400 InvalidData', async (_name, body) => {
      const response = await t.auth.postAs('application/json', '/auth/keys', typeof body === 'string' ? body : JSON.stringify(body));
      expectError(response, 'InvalidData');
    });

    it('refuses wrong types with 400 InvalidData and field details', async () => {
      const response = await t.http().post('/auth/keys').set('X-Api-Key', t.adminKey).send({ permissions: 'all', description: 5 });
      expectError(response, 'InvalidData');
      const fields = (response.body.details.errors as { field: string }[]).map((error) => error.field);
      expect(fields).toEqual(expect.arrayContaining(['permissions', 'description']));
    });

    it('refuses unknown fields, also nested ones, with 400 InvalidData', async () => {
      const top = await t.http().post('/auth/keys').set('X-Api-Key', t.adminKey).send({ permissions: [], admin: true });
      expectError(top, 'InvalidData');
      expect(JSON.stringify(top.body.details)).toContain('admin');
      const nested = await t
        .http()
        .post('/auth/keys')
        .set('X-Api-Key', t.adminKey)
        .send({ permissions: [{ resource: { id: 1, name: 'auth' }, actions: ['Read'] }] });
      expectError(nested, 'InvalidData');
    });

    it('refuses a body sent as text/plain with 400 InvalidData', async () => {
      const response = await t.auth.postAs('text/plain', '/auth/keys', '{"permissions":[]}');
      expectError(response, 'InvalidData');
    });

    it('answers a path with broken percent-encoding with a JSON 400, never 500', async () => {
      const response = await t.http().post('/auth/keys/%E0%A4%A/revoked').set('X-Api-Key', t.adminKey);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(['BadRequest', 'InvalidPathArgument']).toContain(response.body.code);
    });

    it('answers an unsupported body charset with a JSON 415, never 500', async () => {
      const response = await t.auth.postAs('application/json; charset=klingon', '/auth/keys', '{"permissions":[]}');
      expectError(response, 'UnsupportedMediaType');
    });

    it('answers a body with a broken Content-Encoding with a JSON 4xx, never 500', async () => {
      const response = await t.auth.postAs('application/json', '/auth/keys', '{"permissions":[]}').set('Content-Encoding', 'gzip');
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
    });

    it('sends JSON with charset utf-8 on success', async () => {
      const response = await t.http().get('/auth/resources').set('X-Api-Key', t.adminKey);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json; charset=utf-8/i);
    });
  });

  describe('X-Api-Version', () => {
    it('accepts 1 and a missing header', async () => {
      expect((await t.http().get('/auth/resources').set('X-Api-Key', t.adminKey)).status).toBe(200);
      expect((await t.http().get('/auth/resources').set('X-Api-Key', t.adminKey).set('X-Api-Version', '1')).status).toBe(200);
      const token = await t.http().get('/auth/token').set('X-Api-Key', t.adminKey).set('X-Api-Version', '1');
      expect(token.status).toBe(200);
    });

    it.each(['2', '0', 'v1', ''])('refuses %p with 400 BadRequest', async (version) => {
      const response = await t.http().get('/auth/resources').set('X-Api-Key', t.adminKey).set('X-Api-Version', version);
      expectError(response, 'BadRequest');
    });

    it('refuses version 2 on the token endpoint too', async () => {
      const response = await t.http().get('/auth/token').set('X-Api-Key', t.adminKey).set('X-Api-Version', '2');
      expectError(response, 'BadRequest');
    });
  });

  describe('public endpoints', () => {
    it('GET /health/live needs no credentials', async () => {
      const response = await t.http().get('/health/live');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ok' });
    });

    it('GET /health/ready checks the database without credentials', async () => {
      const response = await t.http().get('/health/ready');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ok' });
    });

    it('GET /openapi.json is an OpenAPI 3 document listing the auth paths', async () => {
      const response = await t.http().get('/openapi.json');
      expect(response.status).toBe(200);
      const document = typeof response.body === 'object' && response.body !== null && 'openapi' in response.body ? response.body : JSON.parse(response.text);
      expect(document.openapi).toMatch(/^3\./);
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining(['/auth/keys', '/auth/keys/{api_key_id}/revoked', '/auth/resources', '/auth/token', '/health/live', '/health/ready']),
      );
      expect(document.paths['/auth/keys'].post).toBeDefined();
      expect(document.paths['/auth/keys'].get).toBeDefined();
      expect(document.components.securitySchemes).toBeDefined();
    });

    it('GET /docs serves the UI without credentials', async () => {
      const response = await t.http().get('/docs').redirects(0);
      // Some Swagger UI versions redirect /docs → /docs/; either way the UI is reachable without a key.
      const final = response.status >= 300 && response.status < 400 ? await t.http().get('/docs/') : response;
      expect(final.status).toBe(200);
      expect(final.headers['content-type']).toMatch(/text\/html/);
      expect(final.text).toMatch(/swagger/i);
    });
  });

  describe('the configured admin key', () => {
    it('exists after start-up and holds all four actions on resources 1–4, and nothing else', async () => {
      const list = await t.http().get('/auth/keys').set('X-Api-Key', t.adminKey);
      expect(list.status).toBe(200);
      expect(list.body).toHaveLength(1);
      const [admin] = list.body;
      expect(admin.revoked).toBe(false);
      expect(admin.expiresAt ?? null).toBeNull();
      const all = ['Read', 'ReadChildren', 'Write', 'WriteChildren'];
      expect(
        (admin.permissions as { resource: { id: number }; actions: string[] }[])
          .map((p) => ({ id: p.resource.id, actions: [...p.actions].sort() }))
          .sort((a, b) => a.id - b.id),
      ).toEqual([1, 2, 3, 4].map((id) => ({ id, actions: all })));
      expect(admin.requestLimits).toEqual([]);
    });

    it('works as a key and through a token on an admin operation', async () => {
      const created = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
      expect(created.id).toBeGreaterThan(0);
    });
  });
});
