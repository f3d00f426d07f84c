import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { ResourceAction } from '../../src/common/guard/access.js';
import { expectError } from '../support/clients/api-client.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const AUTH = 1;
const INTEL = 2;

/** decisions §4: per-key, per-target daily limits, counted atomically in PostgreSQL. */
describe('request limits', () => {
  let t: TestApp;
  let db: pg.Pool;
  let collectionId: number;

  beforeAll(async () => {
    t = await createTestApp();
    db = t.db;
    const schema = await t
      .http()
      .post('/intel/schemas')
      .set('X-Api-Key', t.adminKey)
      .send({ $schema: 'https://json-schema.org/draft/2020-12/schema', schemaID: 'limit-schema', title: 'L', type: 'object' });
    expect(schema.status).toBe(201);
    const created = await t.http().post('/intel/collections').set('X-Api-Key', t.adminKey).send({ name: 'limited', schemaID: 'limit-schema' });
    expect(created.status).toBe(201);
    const children = await t.http().get('/auth/resources?parentID=2').set('X-Api-Key', t.adminKey);
    collectionId = (children.body as { id: number; name: string }[]).find((r) => r.name === 'limited')!.id;
  });
  afterAll(async () => {
    await t.close();
  });

  const limitedKey = (permissions: { resource: number; actions: ResourceAction[] }[], limits: { resource: number; action: ResourceAction; limit: number }[]) =>
    createKey(t, { permissions, limits });

  /** The stored counters of a key's limits for today, by `resource/action`. */
  async function countersOf(keyId: number): Promise<Record<string, number>> {
    const { rows } = await db.query(
      `SELECT l.resource_id, l.action, c.count FROM auth_request_limit l
         JOIN auth_request_count c ON c.limit_id = l.id WHERE l.key_id = $1`,
      [keyId],
    );
    return Object.fromEntries(rows.map((row) => [`${row.resource_id}/${row.action}`, row.count]));
  }

  function expectLimitExceeded(response: { status: number; body: { code?: unknown }; headers: Record<string, string> }) {
    expectError(response, 'LimitExceeded');
    expect(response.headers['retry-after']).toMatch(/^\d+$/);
    const retryAfter = Number(response.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
  }

  it('40 concurrent requests against a limit of 10 let exactly 10 through', async () => {
    const { id, key } = await limitedKey([{ resource: AUTH, actions: ['Read'] }], [{ resource: AUTH, action: 'Read', limit: 10 }]);
    // All started together through Node's fetch (separate connections), not serialised by supertest.
    const responses = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const response = await fetch(`${t.url}/auth/resources`, { headers: { 'X-Api-Key': key, 'X-Api-Version': '1' } });
        return { status: response.status, headers: response.headers, body: (await response.json()) as { code?: string } };
      }),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect({ ok: ok.length, refused: refused.length }).toEqual({ ok: 10, refused: 30 });

    for (const response of refused) {
      expect(response.body.code).toBe('LimitExceeded');
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(response.headers.get('ratelimit-limit')).toBe('10');
      expect(response.headers.get('ratelimit-remaining')).toBe('0');
      expect(response.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
    }
    // Every admitted request saw its own count: remaining 9, 8, ..., 0 exactly once each.
    const remaining = ok.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const response of ok) {
      expect(response.headers.get('ratelimit-limit')).toBe('10');
      expect(response.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
    }
    expect(await countersOf(id)).toEqual({ [`${AUTH}/Read`]: 10 });
  });

  it('two instances counting one hot limit together: batches of concurrent requests are counted exactly', async () => {
    // Concurrent requests of one limit are granted in batches (one statement for many), with a few units
    // ahead of use while far from the limit; the batch that reaches the limit is granted only what is
    // left. Across two instances exactly `limit` requests pass and the stored counter is exact.
    const other = await createTestApp({}, t);
    try {
      const limit = 57;
      const { id, key } = await limitedKey([{ resource: AUTH, actions: ['Read'] }], [{ resource: AUTH, action: 'Read', limit }]);
      const statuses: number[] = [];
      const remaining: number[] = [];
      // Three waves of 40 (20 per instance): the first two fit in the limit and are counted in batches,
      // the third crosses it.
      for (let wave = 0; wave < 3; wave += 1) {
        const responses = await Promise.all(
          Array.from({ length: 40 }, async (_, index) => {
            const base = index % 2 === 0 ? t.url : other.url;
            const response = await fetch(`${base}/auth/resources`, { headers: { 'X-Api-Key': key, 'X-Api-Version': '1' } });
            await response.arrayBuffer();
            return { status: response.status, remaining: Number(response.headers.get('ratelimit-remaining')) };
          }),
        );
        for (const response of responses) {
          statuses.push(response.status);
          if (response.status === 200) remaining.push(response.remaining);
        }
      }
      expect({ ok: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 429).length }).toEqual({
        ok: limit,
        refused: 120 - limit,
      });
      // Each request reports the number of the unit it spent (never a lower one than reported before on its
      // instance); a unit given back by one instance may be granted again, so numbers may repeat. The last
      // unit is always spent: nothing is left unspent when the count equals the executed requests.
      expect(remaining.every((value) => value >= 0 && value < limit)).toBe(true);
      expect(remaining).toContain(0);
      expect(await countersOf(id)).toEqual({ [`${AUTH}/Read`]: limit });
    } finally {
      await other.close();
    }
  });

  describe('allowances handed out in blocks per instance', () => {
    /** One GET /auth/resources of `key` on the instance at `base`. */
    async function read(base: string, key: string): Promise<{ status: number; remaining: number }> {
      const response = await fetch(`${base}/auth/resources`, { headers: { 'X-Api-Key': key, 'X-Api-Version': '1' } });
      await response.arrayBuffer();
      return { status: response.status, remaining: Number(response.headers.get('ratelimit-remaining')) };
    }

    /** Waits until `condition` holds (checked every 20 ms, 20 s at most), then returns its last value. */
    async function until(condition: () => Promise<boolean>): Promise<boolean> {
      for (let attempt = 0; attempt < 1000; attempt += 1) {
        if (await condition()) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return condition();
    }

    const readLimited = (limit: number) => limitedKey([{ resource: AUTH, actions: ['Read'] }], [{ resource: AUTH, action: 'Read', limit }]);
    const counted = async (keyId: number) => (await countersOf(keyId))[`${AUTH}/Read`];
    /** Whether units were ever granted ahead of use on the key's counter (the grant records a lease). */
    async function leaseRecorded(keyId: number): Promise<boolean> {
      const { rows } = await db.query(`SELECT c.lease_until FROM auth_request_count c JOIN auth_request_limit l ON l.id = c.limit_id WHERE l.key_id = $1`, [
        keyId,
      ]);
      return rows.length === 1 && rows[0].lease_until !== null;
    }

    it('two instances hammering one key far from its limit: exactly the limit passes, counter exact', async () => {
      const other = await createTestApp({}, t);
      try {
        const limit = 600;
        const { id, key } = await readLimited(limit);
        // 16 concurrent clients per instance, 400 requests each instance: blocks are granted ahead of use.
        const statuses: number[] = [];
        const client = async (base: string) => {
          for (let i = 0; i < 25; i += 1) statuses.push((await read(base, key)).status);
        };
        await Promise.all(Array.from({ length: 32 }, (_, index) => client(index % 2 === 0 ? t.url : other.url)));
        expect({ ok: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 429).length }).toEqual({
          ok: limit,
          refused: 800 - limit,
        });
        expect(await counted(id)).toBe(limit);
        // Units were granted ahead of use, yet none was lost or counted twice.
        expect(await leaseRecorded(id)).toBe(true);
      } finally {
        await other.close();
      }
    });

    it('no false refusal: units held by one instance are given back to the other before it answers 429', async () => {
      const other = await createTestApp({}, t);
      try {
        const limit = 100;
        const { id, key } = await readLimited(limit);
        // A's one request (the key's first) leaves A holding units ahead of use, counted in the database.
        expect(await read(t.url, key)).toEqual({ status: 200, remaining: limit - 1 });
        expect(await leaseRecorded(id)).toBe(true);
        // B spends the rest of the limit: when the counter says "exhausted", B waits for A's lease to end.
        const statuses: number[] = [];
        for (let i = 1; i < limit; i += 1) statuses.push((await read(other.url, key)).status);
        expect(statuses.filter((status) => status !== 200)).toEqual([]);
        expect((await read(t.url, key)).status).toBe(429);
        expect((await read(other.url, key)).status).toBe(429);
        expect(await counted(id)).toBe(limit);
      } finally {
        await other.close();
      }
    });

    it("units not spent within the lease are given back: visible in the other instance's RateLimit-Remaining", async () => {
      const other = await createTestApp({}, t);
      try {
        const limit = 1000;
        const { id, key } = await readLimited(limit);
        expect(await read(t.url, key)).toEqual({ status: 200, remaining: limit - 1 });
        expect(await leaseRecorded(id)).toBe(true);
        // After A's lease age, the counter holds only the request A executed ...
        expect(await until(async () => (await counted(id)) === 1)).toBe(true);
        // ... and B's first request is the second unit of the day.
        expect(await read(other.url, key)).toEqual({ status: 200, remaining: limit - 2 });
      } finally {
        await other.close();
      }
    });

    it('units held at shutdown are given back before the instance stops', async () => {
      // A lease far longer than the test: only the shutdown can give the units back.
      const holder = await createTestApp({ REQUEST_LIMIT_LEASE_MS: '60000' }, t);
      const limit = 1000;
      const { id, key } = await readLimited(limit);
      try {
        expect(await read(holder.url, key)).toEqual({ status: 200, remaining: limit - 1 });
        expect(await counted(id)).toBeGreaterThan(1);
      } finally {
        await holder.close();
      }
      expect(await counted(id)).toBe(1);
      expect(await read(t.url, key)).toEqual({ status: 200, remaining: limit - 2 });
    });
  });

  it('Retry-After and RateLimit-Reset count the seconds to the next UTC midnight', async () => {
    const { key } = await limitedKey([{ resource: AUTH, actions: ['Read'] }], [{ resource: AUTH, action: 'Read', limit: 1 }]);
    expect((await t.http().get('/auth/resources').set('X-Api-Key', key)).status).toBe(200);
    const before = Date.now();
    const refused = await t.http().get('/auth/resources').set('X-Api-Key', key);
    const after = Date.now();
    expectLimitExceeded(refused);
    const midnight = (now: number) => {
      const next = new Date(now);
      next.setUTCHours(24, 0, 0, 0);
      return (next.getTime() - now) / 1000;
    };
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(Math.floor(midnight(after)));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(midnight(before)) + 1);
    expect(refused.headers['ratelimit-reset']).toBe(refused.headers['retry-after']);
  });

  it('a refused request is not executed', async () => {
    const writer = await limitedKey([{ resource: INTEL, actions: ['Write'] }], [{ resource: INTEL, action: 'Write', limit: 1 }]);
    const register = (schemaID: string) => t.http().post('/intel/schemas').set('X-Api-Key', writer.key).send({ schemaID, type: 'object' });
    expect((await register('refused-a')).status).toBe(201);
    expectLimitExceeded(await register('refused-b'));
    expectError(await t.http().get('/intel/schemas/refused-b').set('X-Api-Key', t.adminKey), 'NotFound');
    expect(await countersOf(writer.id)).toEqual({ [`${INTEL}/Write`]: 1 });

    // Nor is a revoke.
    const revoker = await limitedKey([{ resource: AUTH, actions: ['Write'] }], [{ resource: AUTH, action: 'Write', limit: 1 }]);
    const first = await createKey(t, { permissions: [] });
    const second = await createKey(t, { permissions: [] });
    expect((await t.http().post(`/auth/keys/${first.id}/revoked`).set('X-Api-Key', revoker.key)).status).toBe(204);
    expectLimitExceeded(await t.http().post(`/auth/keys/${second.id}/revoked`).set('X-Api-Key', revoker.key));
    const { rows } = await db.query('SELECT revoked_at FROM auth_api_key WHERE id = $1', [second.id]);
    expect(rows[0].revoked_at).toBeNull();
    expect(await countersOf(revoker.id)).toEqual({ [`${AUTH}/Write`]: 1 });
  });

  it('counts only requests whose target the limit names', async () => {
    const { id, key } = await limitedKey([{ resource: INTEL, actions: ['Read', 'Write'] }], [{ resource: INTEL, action: 'Read', limit: 1 }]);
    for (const schemaID of ['named-a', 'named-b']) {
      const write = await t.http().post('/intel/schemas').set('X-Api-Key', key).send({ schemaID, type: 'object' });
      expect(write.status).toBe(201);
      expect(write.headers['ratelimit-limit']).toBeUndefined();
    }
    const first = await t.http().get('/intel/schemas').set('X-Api-Key', key);
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('1');
    expect(first.headers['ratelimit-remaining']).toBe('0');
    expectLimitExceeded(await t.http().get('/intel/schemas/named-a').set('X-Api-Key', key));
    expect(await countersOf(id)).toEqual({ [`${INTEL}/Read`]: 1 });
  });

  it("a limit on the parent's ReadChildren counts requests to a child (a collection under intel)", async () => {
    const { id, key } = await limitedKey([{ resource: INTEL, actions: ['ReadChildren'] }], [{ resource: INTEL, action: 'ReadChildren', limit: 2 }]);
    const view = () => t.http().get('/intel/collections/limited').set('X-Api-Key', key);
    expect((await view()).status).toBe(200);
    const second = await view();
    expect(second.status).toBe(200);
    expect(second.headers['ratelimit-remaining']).toBe('0');
    expectLimitExceeded(await view());
    expect(await countersOf(id)).toEqual({ [`${INTEL}/ReadChildren`]: 2 });
  });

  it("a limit on the parent's ReadChildren counts GET /insight/tasks/{id} (tasks under insight)", async () => {
    const { key } = await limitedKey([{ resource: 3, actions: ['ReadChildren'] }], [{ resource: 3, action: 'ReadChildren', limit: 1 }]);
    const view = () => t.http().get('/insight/tasks/00000000-0000-4000-8000-000000000000').set('X-Api-Key', key);
    const first = await view();
    expect(first.status).toBe(404);
    expect(first.headers['ratelimit-limit']).toBe('1');
    expectLimitExceeded(await view());
  });

  it('with two matching limits a request is refused by the tighter one and counted by neither', async () => {
    const { id, key } = await limitedKey(
      [{ resource: INTEL, actions: ['ReadChildren'] }],
      [
        { resource: INTEL, action: 'ReadChildren', limit: 5 },
        { resource: collectionId, action: 'Read', limit: 2 },
      ],
    );
    const view = () => t.http().get('/intel/collections/limited').set('X-Api-Key', key);
    const first = await view();
    expect(first.status).toBe(200);
    // The headers describe the most restrictive limit.
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect(first.headers['ratelimit-remaining']).toBe('1');
    expect((await view()).status).toBe(200);
    expectLimitExceeded(await view());
    expectLimitExceeded(await view());
    expect(await countersOf(id)).toEqual({ [`${INTEL}/ReadChildren`]: 2, [`${collectionId}/Read`]: 2 });
  });

  it('limits are per key', async () => {
    const spec = [{ resource: AUTH, action: 'Read' as const, limit: 1 }];
    const a = await limitedKey([{ resource: AUTH, actions: ['Read'] }], spec);
    const b = await limitedKey([{ resource: AUTH, actions: ['Read'] }], spec);
    expect((await t.http().get('/auth/resources').set('X-Api-Key', a.key)).status).toBe(200);
    expect((await t.http().get('/auth/resources').set('X-Api-Key', b.key)).status).toBe(200);
    expectLimitExceeded(await t.http().get('/auth/resources').set('X-Api-Key', a.key));
  });

  it('counts token requests against the key the token belongs to', async () => {
    const { key } = await limitedKey([{ resource: AUTH, actions: ['Read'] }], [{ resource: AUTH, action: 'Read', limit: 1 }]);
    const token = (await t.http().get('/auth/token').set('X-Api-Key', key)).body.accessToken as string;
    expect((await t.http().get('/auth/resources').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    expectLimitExceeded(await t.http().get('/auth/resources').set('X-Api-Key', key));
  });

  it('a key without limits gets no RateLimit headers', async () => {
    const { key } = await createKey(t, { permissions: [{ resource: AUTH, actions: ['Read'] }] });
    for (let i = 0; i < 3; i++) {
      const response = await t.http().get('/auth/resources').set('X-Api-Key', key);
      expect(response.status).toBe(200);
      expect(response.headers['ratelimit-limit']).toBeUndefined();
      expect(response.headers['ratelimit-remaining']).toBeUndefined();
      expect(response.headers['ratelimit-reset']).toBeUndefined();
      expect(response.headers['retry-after']).toBeUndefined();
    }
  });
});
