import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/api-client.js';
import { createKey, cursorOf, parseLinks } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Cursor paging, exercised on GET /auth/keys (decisions §5, wire-contract §3). */
describe('cursor pagination', () => {
  let t: TestApp;
  /** Ids of the active keys whose description contains "Paged Key". */
  const matching: number[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    for (let i = 0; i < 7; i++) {
      matching.push((await createKey(t, { permissions: [], description: `paged key ${i}` })).id);
      // Noise the filters must drop: other descriptions and revoked matches.
      await createKey(t, { permissions: [], description: `other ${i}` });
      if (i % 3 === 0) {
        const revoked = await createKey(t, { permissions: [], description: `PAGED key revoked ${i}` });
        expect((await t.http().post(`/auth/keys/${revoked.id}/revoked`).set('X-Api-Key', t.adminKey)).status).toBe(204);
      }
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string) => t.http().get(path).set('X-Api-Key', t.adminKey);

  it('round-trips with limit and filters carried in the next link, followed verbatim like the SDK', async () => {
    const seen: number[] = [];
    let path: string | undefined = '/auth/keys?revoked=false&description=Paged%20Key&limit=3';
    const sizes: number[] = [];
    let pages = 0;
    while (path !== undefined) {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(Array.isArray(response.body)).toBe(true);
      sizes.push(response.body.length);
      seen.push(
        ...(response.body as { id: number; revoked: boolean; description: string }[]).map((key) => {
          expect(key.revoked).toBe(false);
          expect(key.description.toLowerCase()).toContain('paged key');
          return key.id;
        }),
      );
      const next: string | undefined = parseLinks(response.headers.link).next;
      if (next !== undefined) {
        // Path-absolute, with limit, filters and an opaque URL-safe cursor.
        expect(next.startsWith('/auth/keys?')).toBe(true);
        const url = new URL(next, 'http://x');
        expect(url.searchParams.get('limit')).toBe('3');
        expect(url.searchParams.get('revoked')).toBe('false');
        expect(url.searchParams.get('description')).toBe('Paged Key');
        expect(cursorOf(next)).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(response.headers.link).toMatch(/^<[^>]+>; rel="next"$/);
      }
      path = next;
      pages++;
      if (pages > 10) throw new Error('the next links do not end');
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(matching);
  });

  it('has no Link on a last page that is exactly full', async () => {
    const first = await get('/auth/keys?revoked=false&description=paged%20key&limit=7');
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(7);
    expect(first.headers.link).toBeUndefined();
  });

  it('uses the default page size without limit and keeps the filters in the link', async () => {
    const response = await get('/auth/keys?description=other');
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(7);
    expect(response.headers.link).toBeUndefined();
  });

  it('clamps a limit above 1000 instead of refusing it', async () => {
    const response = await get('/auth/keys?limit=5000');
    expect(response.status).toBe(200);
    expect(response.body.length).toBeGreaterThan(7);
    expect(response.headers.link).toBeUndefined();
    expect((await get('/auth/keys?limit=999999999999999')).status).toBe(200);
    // Any integer is clamped, however many digits it has.
    const huge = await get(`/auth/keys?limit=${'9'.repeat(40)}`);
    expect(huge.status).toBe(200);
    expect(huge.body.length).toBe(response.body.length);
    expect((await get('/auth/keys?limit=0001')).status).toBe(200);
  });

  it.each(['0', '-1', 'abc', '1.5', '', '1e2', '0x10', '3&limit=4', ' 3'])('refuses limit=%p with 400 InvalidQueryArgument', async (limit) => {
    expectError(await get(`/auth/keys?limit=${limit}`), 'InvalidQueryArgument');
  });

  it('refuses limit as a nested object with 400 InvalidQueryArgument', async () => {
    expectError(await get('/auth/keys?limit[a]=1'), 'InvalidQueryArgument');
  });

  it.each([
    ['not base64url', '!!!'],
    ['base64url of non-JSON', Buffer.from('not json').toString('base64url')],
    ['a JSON string', b64('a')],
    ['a wrong shape', b64({ b: 1 })],
    ['a negative id', b64({ a: -1 })],
    ['a fractional id', b64({ a: 1.5 })],
    ['an unsafe integer', b64({ a: 1e20 })],
    ['an extra field', b64({ a: 1, x: 2 })],
    ['padding', `${b64({ a: 1 })}==`],
    ['an oversized value', 'A'.repeat(5000)],
  ])('refuses a cursor with %s with 400 InvalidQueryArgument', async (_name, cursor) => {
    expectError(await get(`/auth/keys?cursor=${encodeURIComponent(cursor)}`), 'InvalidQueryArgument');
  });

  it('never answers a tampered but well-formed cursor with 500', async () => {
    const first = await get('/auth/keys?limit=2');
    const cursor = cursorOf(parseLinks(first.headers.link).next)!;
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    expect(typeof decoded).toBe('object');
    // An id beyond the id column's range: an empty page or a 400, never a server error.
    const beyond = await get(`/auth/keys?cursor=${b64({ a: 3_000_000_000 })}`);
    expect([200, 400]).toContain(beyond.status);
    if (beyond.status === 200) expect(beyond.body).toEqual([]);
    else expect(beyond.body.code).toBe('InvalidQueryArgument');
    const resources = await get(`/auth/resources?cursor=${b64({ a: 3_000_000_000 })}`);
    expect([200, 400]).toContain(resources.status);
  });

  it('refuses a repeated cursor with 400 InvalidQueryArgument', async () => {
    expectError(await get(`/auth/keys?cursor=${b64({ a: 1 })}&cursor=${b64({ a: 2 })}`), 'InvalidQueryArgument');
  });
});
