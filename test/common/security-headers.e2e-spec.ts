import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { download, uploadFile } from '../filebox/filebox.helpers.js';
import { tokenFor } from '../support/factories.js';
import { fetchOpenApi, type OpenApiDocument } from '../support/openapi.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

type Headers = Record<string, string | string[] | undefined>;

/** OWASP REST guidance: every API answer, success or refusal. */
function expectSecurityHeaders(what: string, headers: Headers) {
  const cache = headers.etag === undefined ? 'no-store' : 'private, no-cache';
  expect({
    what,
    nosniff: headers['x-content-type-options'],
    csp: headers['content-security-policy'],
    cache: headers['cache-control'],
  }).toEqual({ what, nosniff: 'nosniff', csp: "frame-ancestors 'none'", cache });
}

describe('security response headers', () => {
  let t: TestApp;
  let document: OpenApiDocument;

  beforeAll(async () => {
    t = await createTestApp();
    document = await fetchOpenApi(t);
    await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send({ schemaID: 'plain', type: 'object' }).expect(201);
    await t.http().post('/intel/collections').set('X-Api-Key', t.adminKey).send({ name: 'c1', schemaID: 'plain' }).expect(201);
  });
  afterAll(async () => {
    await t.close();
  });

  it('are on the answer of every operation of the OpenAPI document, with and without credentials', async () => {
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({
        method,
        path: path.replace(/\{[^}]+\}/g, (name) => (name === '{collectionName}' || name === '{collection_id}' ? 'c1' : 'x1')),
      })),
    );
    expect(operations.length).toBeGreaterThan(25);
    for (const { method, path } of operations) {
      const anonymous = await t.http()[method as 'get'](path);
      expectSecurityHeaders(`${method} ${path} anonymous (${anonymous.status})`, anonymous.headers as Headers);
      // Reads as the admin too: real answers, some with a tag (writes with credentials are the other suites').
      if (method === 'get' || method === 'head') {
        const answer = await t.http()[method](path).set('X-Api-Key', t.adminKey);
        expectSecurityHeaders(`${method} ${path} admin (${answer.status})`, answer.headers as Headers);
      }
    }
  });

  it('lets tagged answers be revalidated: private, no-cache on the answer and on its 304', async () => {
    const read = await t.http().get('/intel/collections/c1').set('X-Api-Key', t.adminKey);
    expect(read.status).toBe(200);
    expect(read.headers['cache-control']).toBe('private, no-cache');
    const again = await t
      .http()
      .get('/intel/collections/c1')
      .set('X-Api-Key', t.adminKey)
      .set('If-None-Match', read.headers.etag as string);
    expect(again.status).toBe(304);
    expectSecurityHeaders('304', again.headers as Headers);
    expect(again.headers.etag).toBe(read.headers.etag);
    const missing = await t.http().get('/intel/collections/none').set('X-Api-Key', t.adminKey);
    expectSecurityHeaders('404', missing.headers as Headers);
  });

  it('keep downloads, ranges and long-polls working', async () => {
    const token = await tokenFor(t, t.adminKey);
    const content = Buffer.from('0123456789'.repeat(1000));
    const uploaded = await uploadFile(t, token, content);
    expect(uploaded.status).toBe(201);
    const fileId = (uploaded.json() as { fileID: string }).fileID;
    const whole = await download(t, token, fileId);
    expect(whole.status).toBe(200);
    expect(whole.body.equals(content)).toBe(true);
    expectSecurityHeaders('download', whole.headers);
    const part = await download(t, token, fileId, 'bytes=10-19');
    expect(part.status).toBe(206);
    expect(part.body.toString()).toBe('0123456789');
    expectSecurityHeaders('range', part.headers);
    const head = await t.http().head(`/filebox/files/${fileId}/content`).set('Authorization', `Bearer ${token}`);
    expect(head.status).toBe(200);
    expectSecurityHeaders('head', head.headers as Headers);

    const polled = await t.http().post('/insight/task-queue/executing-tasks').set('X-Api-Key', t.adminKey).send({ limit: 1, wait: 1 });
    expect(polled.status).toBe(200);
    expect(polled.body).toEqual([]);
    expectSecurityHeaders('long-poll', polled.headers as Headers);
  });

  it('are left to the web console under /console, which sets its own', async () => {
    const answer = await t.http().get('/console/anything');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['content-security-policy']).toContain("default-src 'self'");
    expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });
});
