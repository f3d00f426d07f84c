import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/test-app.js';

function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('hostile input shared by every area', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    const schema = await t.http().post('/intel/schemas').set('X-Api-Key', t.adminKey).send({ schemaID: 'deep', type: 'object' });
    expect(schema.status).toBe(201);
    const collection = await t.http().post('/intel/collections').set('X-Api-Key', t.adminKey).send({ name: 'deep', schemaID: 'deep' });
    expect(collection.status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['POST', '/intel/schemas', (inner: string) => `{"schemaID":"x","properties":${inner}}`],
    [
      'POST',
      '/intel/collections/deep/objects',
      (inner: string) => `{"type":"DomainName","keys":[{"type":"DomainName","value":"a.example"}],"context":${inner}}`,
    ],
    ['POST', '/auth/keys', (inner: string) => `{"permissions":[],"description":${inner}}`],
  ])('%s %s refuses a body nested deeper than 256 levels with 400 InvalidData', async (method, path, body) => {
    const response = await t
      .http()
      [method.toLowerCase() as 'post'](path)
      .set('X-Api-Key', t.adminKey)
      .set('Content-Type', 'application/json')
      .send(body(nested(5000)));
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('InvalidData');
  });

  it('refuses a reserved attribute name in any DTO body (the pipe would strip it) and creates nothing', async () => {
    const before = await t.db.query('SELECT count(*)::int AS n FROM auth_api_key');
    const response = await t.auth.postAs('application/json', '/auth/keys', '{"permissions": [{"resource": {"id": 1, "constructor": 1}, "actions": ["Read"]}]}');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'InvalidData', details: { InstanceLocation: '/permissions/0/resource/constructor' } });
    expect((await t.db.query('SELECT count(*)::int AS n FROM auth_api_key')).rows).toEqual(before.rows);
  });

  it('accepts nesting within the limit', async () => {
    const body = `{"type":"DomainName","keys":[{"type":"DomainName","value":"a.example"}],"context":${nested(200)}}`;
    const response = await t.intel.postAs('application/json', '/intel/collections/deep/objects', body);
    expect(response.status).toBe(204);
  });

  it.each(['GET', 'PATCH'])('%s of a collection name holding U+0000 is a 4xx JSON error, not a 500', async (method) => {
    const response = await t.http()[method.toLowerCase() as 'get']('/intel/collections/a%00b').set('X-Api-Key', t.adminKey).set('If-Match', '"1"').send({});
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('InvalidPathArgument');
  });
});

describe('forged cursors beyond the integer range', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(['/intel/collections', '/auth/keys', '/auth/resources', '/intel/schemas'])(
    'GET %s with an id cursor past int4 answers without a 500',
    async (path) => {
      const cursor = Buffer.from(JSON.stringify({ a: 3_000_000_000 })).toString('base64url');
      const response = await t.http().get(`${path}?cursor=${cursor}`).set('X-Api-Key', t.adminKey);
      // Either an empty last page (a valid keyset position) or a refused cursor: never a server error.
      expect([200, 400]).toContain(response.status);
      if (response.status === 200) expect(response.body).toEqual([]);
      else expect(response.body.code).toBe('InvalidQueryArgument');
    },
  );
});

describe('requests refused by the HTTP parser', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function raw(request: string): Promise<{ status: number; body: unknown }> {
    const { port } = new URL(t.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.write(request);
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const [head, body] = text.split('\r\n\r\n');
    return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
  }

  it('answers oversized headers with 431 and a JSON body', async () => {
    const response = await raw(`GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
    expect(response.status).toBe(431);
    expect(response.body).toMatchObject({ code: 'RequestHeaderFieldsTooLarge' });
  });

  it('answers broken HTTP framing with 400 and a JSON body', async () => {
    const response = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'BadRequest' });
  });
});
