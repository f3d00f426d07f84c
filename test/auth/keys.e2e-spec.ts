import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { expectError } from '../support/clients/auth.js';
import { createKey, tokenFor } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface KeyView {
  id: number;
  createdAt: string;
  expiresAt?: string | null;
  description?: string | null;
  lastUsedAt?: string | null;
  revoked: boolean;
  permissions: { resource: { id: number }; actions: string[] }[];
  requestLimits: { target: { resource: { id: number }; action: string }; limit: number; period: string }[];
}

describe('API keys (/auth/keys)', () => {
  let t: TestApp;
  let db: pg.Pool;

  beforeAll(async () => {
    t = await createTestApp();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  async function viewOf(id: number): Promise<KeyView> {
    const response = await t.auth.keys('?limit=1000');
    expect(response.status).toBe(200);
    const view = (response.body as KeyView[]).find((key) => key.id === id);
    if (!view) throw new Error(`key ${id} is not listed`);
    return view;
  }

  describe('POST /auth/keys', () => {
    it('generates a key from the SDK form (wire-contract §12.9) and answers 201 {id, key}', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const response = await t.auth
        .post('/auth/keys')
        .set('Content-Type', 'application/json')
        // Python json.dumps spacing and key order.
        .send(
          `{"expiresAt": "${expiresAt}", "description": "desc", ` +
            `"requestLimits": [{"target": {"resource": {"id": 3}, "action": "Read"}, "limit": 10, "period": "Day"}], ` +
            `"permissions": [{"resource": {"id": 3}, "actions": ["Read", "WriteChildren"]}]}`,
        );
      expect(response.status).toBe(201);
      expect(Object.keys(response.body).sort()).toEqual(['id', 'key']);
      expect(Number.isInteger(response.body.id)).toBe(true);
      expect(response.body.key).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const view = await viewOf(response.body.id);
      expect(view).toEqual({
        id: response.body.id,
        createdAt: expect.stringMatching(TIMESTAMP),
        expiresAt: expiresAt.replace('Z', '.000Z'),
        description: 'desc',
        lastUsedAt: null,
        revoked: false,
        permissions: [{ resource: { id: 3 }, actions: expect.arrayContaining(['Read', 'WriteChildren']) }],
        requestLimits: [{ target: { resource: { id: 3 }, action: 'Read' }, limit: 10, period: 'Day' }],
        // Additions of the key view (docs/audit.md), which clients that do not know them ignore.
        prefix: response.body.key.slice(0, 8),
        lastUsedAddress: null,
        allowedNetworks: null,
        // The key's TLP ceiling (docs/markings.md): an unrestricted creator's default.
        maxTLP: 'TLP:RED',
        // The key's reliability (extensions §18): F by default.
        reliability: 'F',
      });
      expect(view.permissions[0].actions).toHaveLength(2);
    });

    it('always emits permissions and requestLimits, [] when there are none', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const view = await viewOf(id);
      expect(view.permissions).toEqual([]);
      expect(view.requestLimits).toEqual([]);
      expect(view.createdAt).toMatch(TIMESTAMP);
      expect(view.expiresAt ?? null).toBeNull();
      expect(view.description ?? null).toBeNull();
    });

    it('shows the key value once and stores only its SHA-256', async () => {
      const { id, key } = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }], description: 'hashed' });
      const listed = await t.auth.keys();
      expect(listed.text).not.toContain(key);
      const { rows } = await db.query('SELECT * FROM auth_api_key WHERE id = $1', [id]);
      expect(rows).toHaveLength(1);
      const stored = JSON.stringify(rows[0], (_k, value) => (value && value.type === 'Buffer' ? Buffer.from(value.data).toString('latin1') : value));
      expect(stored).not.toContain(key);
      expect(Buffer.from(rows[0].key_hash).equals(createHash('sha256').update(key).digest())).toBe(true);
      // No column of any auth table holds the value.
      const { rows: dump } = await db.query(`SELECT string_agg(t::text, '|') AS all FROM (SELECT * FROM auth_api_key) t`);
      expect(dump[0].all).not.toContain(key);
      // The value works as a credential.
      expect((await t.auth.as(key).keys()).status).toBe(200);
    });

    it('generates a different value on every call', async () => {
      const a = await createKey(t, { permissions: [] });
      const b = await createKey(t, { permissions: [] });
      expect(a.key).not.toBe(b.key);
      expect(a.id).not.toBe(b.id);
    });

    it('accepts expiresAt with fractional seconds and an offset, and null description/expiresAt', async () => {
      const future = new Date(Date.now() + 3_600_000);
      const withOffset = future.toISOString().replace('Z', '+00:00');
      const response = await t.auth.createKey({ permissions: [], expiresAt: withOffset });
      expect(response.status).toBe(201);
      expect((await viewOf(response.body.id)).expiresAt).toBe(future.toISOString());
      const nulls = await t.auth.createKey({ permissions: [], expiresAt: null, description: null });
      expect(nulls.status).toBe(201);
    });

    it('refuses expiresAt in the past with 400 InvalidData', async () => {
      expectError(await t.auth.createKey({ permissions: [], expiresAt: '2020-01-01T00:00:00Z' }), 'InvalidData');
    });

    it.each([
      ['a missing permissions field', {}],
      ['permissions not an array', { permissions: { resource: { id: 1 }, actions: ['Read'] } }],
      ['a permission without resource', { permissions: [{ actions: ['Read'] }] }],
      ['a string resource id', { permissions: [{ resource: { id: '1' }, actions: ['Read'] }] }],
      ['a fractional resource id', { permissions: [{ resource: { id: 1.5 }, actions: ['Read'] }] }],
      ['an unknown action', { permissions: [{ resource: { id: 1 }, actions: ['Delete'] }] }],
      ['a lower-case action', { permissions: [{ resource: { id: 1 }, actions: ['read'] }] }],
      ['actions not an array', { permissions: [{ resource: { id: 1 }, actions: 'Read' }] }],
      ['a flat resource_id (spec names, not wire names)', { permissions: [{ resource_id: 1, actions: ['Read'] }] }],
      ['a malformed expiresAt', { permissions: [], expiresAt: 'tomorrow' }],
      ['an expiresAt without zone', { permissions: [], expiresAt: '2099-01-01T00:00:00' }],
      ['an impossible expiresAt', { permissions: [], expiresAt: '2099-13-45T00:00:00Z' }],
      ['a non-existent calendar day', { permissions: [], expiresAt: '2099-02-30T00:00:00Z' }],
      ['a numeric description', { permissions: [], description: 7 }],
      ['requestLimits not an array', { permissions: [], requestLimits: {} }],
      [
        'an unknown period',
        {
          permissions: [{ resource: { id: 1 }, actions: ['Read'] }],
          requestLimits: [{ target: { resource: { id: 1 }, action: 'Read' }, limit: 1, period: 'Hour' }],
        },
      ],
      [
        'a string limit',
        {
          permissions: [{ resource: { id: 1 }, actions: ['Read'] }],
          requestLimits: [{ target: { resource: { id: 1 }, action: 'Read' }, limit: '5', period: 'Day' }],
        },
      ],
      ['a limit without target', { permissions: [{ resource: { id: 1 }, actions: ['Read'] }], requestLimits: [{ limit: 5, period: 'Day' }] }],
      ['an unknown field', { permissions: [], scopes: ['all'] }],
    ])('refuses %s with 400 InvalidData', async (_name, body) => {
      const response = await t.auth.createKey(body);
      expectError(response, 'InvalidData');
      expect(typeof response.body.message).toBe('string');
    });

    it('refuses an unknown resource id with 422 ResourceNotFound', async () => {
      expectError(await t.auth.createKey({ permissions: [{ resource: { id: 999999 }, actions: ['Read'] }] }), 'ResourceNotFound');
      expectError(await t.auth.createKey({ permissions: [{ resource: { id: 0 }, actions: ['Read'] }] }), 'ResourceNotFound');
      expectError(await t.auth.createKey({ permissions: [{ resource: { id: 99999999999 }, actions: ['Read'] }] }), 'ResourceNotFound');
      expectError(
        await t.auth.createKey({
          permissions: [{ resource: { id: 1 }, actions: ['Read'] }],
          requestLimits: [{ target: { resource: { id: 4242 }, action: 'Read' }, limit: 1, period: 'Day' }],
        }),
        'ResourceNotFound',
      );
    });

    it('refuses a limit below 1 with 422 InvalidRequestLimit', async () => {
      for (const limit of [0, -5]) {
        expectError(
          await t.auth.createKey({
            permissions: [{ resource: { id: 1 }, actions: ['Read'] }],
            requestLimits: [{ target: { resource: { id: 1 }, action: 'Read' }, limit, period: 'Day' }],
          }),
          'InvalidRequestLimit',
        );
      }
    });

    it('refuses a limit whose target the new key does not cover with 422 InvalidRequestLimit', async () => {
      // Write on auth is not granted.
      expectError(
        await t.auth.createKey({
          permissions: [{ resource: { id: 1 }, actions: ['Read'] }],
          requestLimits: [{ target: { resource: { id: 1 }, action: 'Write' }, limit: 5, period: 'Day' }],
        }),
        'InvalidRequestLimit',
      );
      // ReadChildren on insight is not implied by Read on tasks.
      expectError(
        await t.auth.createKey({
          permissions: [{ resource: { id: 5 }, actions: ['Read'] }],
          requestLimits: [{ target: { resource: { id: 3 }, action: 'ReadChildren' }, limit: 5, period: 'Day' }],
        }),
        'InvalidRequestLimit',
      );
    });

    it("accepts a limit on a child covered through the parent's *Children action", async () => {
      const response = await t.auth.createKey({
        permissions: [{ resource: { id: 3 }, actions: ['ReadChildren'] }],
        requestLimits: [{ target: { resource: { id: 5 }, action: 'Read' }, limit: 5, period: 'Day' }],
      });
      expect(response.status).toBe(201);
    });

    it('refuses two limits on the same target with 422 LimitSetConflict', async () => {
      expectError(
        await t.auth.createKey({
          permissions: [{ resource: { id: 1 }, actions: ['Read'] }],
          requestLimits: [
            { target: { resource: { id: 1 }, action: 'Read' }, limit: 5, period: 'Day' },
            { target: { resource: { id: 1 }, action: 'Read' }, limit: 7, period: 'Day' },
          ],
        }),
        'LimitSetConflict',
      );
    });

    it('writes nothing when the form is refused', async () => {
      const before = (await db.query('SELECT count(*)::int AS n FROM auth_api_key')).rows[0].n;
      await t.auth.createKey({
        permissions: [{ resource: { id: 1 }, actions: ['Read'] }],
        requestLimits: [
          { target: { resource: { id: 1 }, action: 'Read' }, limit: 5, period: 'Day' },
          { target: { resource: { id: 1 }, action: 'Read' }, limit: 7, period: 'Day' },
        ],
      });
      expect((await db.query('SELECT count(*)::int AS n FROM auth_api_key')).rows[0].n).toBe(before);
    });

    describe('no escalation: a key grants only what it holds', () => {
      it('refuses to grant an action the caller lacks with 403 Forbidden', async () => {
        const caller = await createKey(t, { permissions: [{ resource: 1, actions: ['Write'] }] });
        // Caller holds Write on auth only: granting Read on auth or anything on intel is escalation.
        expectError(await t.auth.as(caller.key).createKey({ permissions: [{ resource: { id: 1 }, actions: ['Read'] }] }), 'Forbidden');
        expectError(await t.auth.as(caller.key).createKey({ permissions: [{ resource: { id: 2 }, actions: ['Read'] }] }), 'Forbidden');
        // What it does hold it may pass on.
        expect((await t.auth.as(caller.key).createKey({ permissions: [{ resource: { id: 1 }, actions: ['Write'] }] })).status).toBe(201);
      });

      it('lets a key grant Read on a child it reads through the parent, but not *Children it holds only via the parent', async () => {
        const caller = await createKey(t, {
          permissions: [
            { resource: 1, actions: ['Write'] },
            { resource: 3, actions: ['ReadChildren'] },
          ],
        });
        // Read on tasks (5) is held through ReadChildren on insight (3).
        expect((await t.auth.as(caller.key).createKey({ permissions: [{ resource: { id: 5 }, actions: ['Read'] }] })).status).toBe(201);
        // ReadChildren on insight itself is held directly.
        expect((await t.auth.as(caller.key).createKey({ permissions: [{ resource: { id: 3 }, actions: ['ReadChildren'] }] })).status).toBe(201);
        // ReadChildren on tasks would reach tasks' children: not held.
        expectError(await t.auth.as(caller.key).createKey({ permissions: [{ resource: { id: 5 }, actions: ['ReadChildren'] }] }), 'Forbidden');
        // Read on insight itself is not held (ReadChildren covers only the children).
        expectError(await t.auth.as(caller.key).createKey({ permissions: [{ resource: { id: 3 }, actions: ['Read'] }] }), 'Forbidden');
        // Write on tasks is not held either.
        expectError(await t.auth.as(caller.key).createKey({ permissions: [{ resource: { id: 5 }, actions: ['Write'] }] }), 'Forbidden');
      });

      it('refuses key generation by a key that carries request limits (the new key would escape them)', async () => {
        const limited = await createKey(t, {
          permissions: [{ resource: 1, actions: ['Read', 'Write'] }],
          limits: [{ resource: 1, action: 'Read', limit: 100 }],
        });
        const before = (await t.auth.keys('?limit=1000')).body.length;
        expectError(await t.auth.as(limited.key).createKey({ permissions: [{ resource: { id: 1 }, actions: ['Read'] }] }), 'Forbidden');
        expect((await t.auth.keys('?limit=1000')).body.length).toBe(before);
      });

      it('refuses a key that would outlive its creator, and accepts one that expires no later', async () => {
        const inOneDay = new Date(Date.now() + 86_400_000);
        const creator = await createKey(t, {
          permissions: [{ resource: 1, actions: ['Write'] }],
          expiresAt: inOneDay.toISOString(),
        });
        const grant = { permissions: [{ resource: { id: 1 }, actions: ['Write'] }] };
        expectError(await t.auth.as(creator.key).createKey(grant), 'Forbidden');
        const later = new Date(inOneDay.getTime() + 60_000).toISOString();
        expectError(await t.auth.as(creator.key).createKey({ ...grant, expiresAt: later }), 'Forbidden');
        const earlier = new Date(inOneDay.getTime() - 60_000).toISOString();
        expect((await t.auth.as(creator.key).createKey({ ...grant, expiresAt: earlier })).status).toBe(201);
      });

      it('refuses generation without Write on auth with 403 MissingPermissions', async () => {
        const reader = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
        expectError(await t.auth.as(reader.key).createKey({ permissions: [] }), 'MissingPermissions');
      });

      it('works through a bearer token as well', async () => {
        const caller = await createKey(t, { permissions: [{ resource: 1, actions: ['Write'] }] });
        const token = await tokenFor(t, caller.key);
        const ok = await t.auth.as({ bearer: token }).createKey({ permissions: [{ resource: { id: 1 }, actions: ['Write'] }] });
        expect(ok.status).toBe(201);
        const refused = await t.auth.as({ bearer: token }).createKey({ permissions: [{ resource: { id: 4 }, actions: ['Read'] }] });
        expectError(refused, 'Forbidden');
      });
    });

    it('needs credentials: 401 Unauthorized', async () => {
      expectError(await t.http().post('/auth/keys').send({ permissions: [] }), 'Unauthorized');
      expectError(await t.auth.as('not-a-key').createKey({ permissions: [] }), 'Unauthorized');
    });
  });

  describe('GET /auth/keys', () => {
    let ids: { alpha: number; beta: number; pct: number; under: number; revokedAlpha: number };

    beforeAll(async () => {
      const make = async (description: string) => (await createKey(t, { permissions: [], description })).id;
      ids = {
        alpha: await make('Filter-ALPHA one'),
        beta: await make('filter-beta two'),
        pct: await make('filter 100% sure'),
        under: await make('filter a_b'),
        revokedAlpha: await make('filter-alpha revoked'),
      };
      expect((await t.auth.revoke(ids.revokedAlpha)).status).toBe(204);
    });

    const listedIds = async (query: string) => {
      const response = await t.auth.keys(query);
      expect(response.status).toBe(200);
      expect(Array.isArray(response.body)).toBe(true);
      return (response.body as KeyView[]).map((key) => key.id);
    };

    it('lists every key as a bare JSON array when no filter is given', async () => {
      const all = await listedIds('?limit=1000');
      expect(all).toEqual(expect.arrayContaining(Object.values(ids)));
      expect(all).toEqual([...all].sort((a, b) => a - b));
    });

    it('filters by revoked=true / revoked=false', async () => {
      const revoked = await listedIds('?revoked=true&limit=1000');
      const active = await listedIds('?revoked=false&limit=1000');
      expect(revoked).toContain(ids.revokedAlpha);
      expect(revoked).not.toContain(ids.alpha);
      expect(active).toContain(ids.alpha);
      expect(active).not.toContain(ids.revokedAlpha);
      const all = await listedIds('?limit=1000');
      expect([...revoked, ...active].sort((a, b) => a - b)).toEqual(all);
    });

    it('filters by description as a case-insensitive substring', async () => {
      expect((await listedIds('?description=alpha')).sort()).toEqual([ids.alpha, ids.revokedAlpha].sort());
      expect(await listedIds('?description=ALPHA%20ONE')).toEqual([ids.alpha]);
      expect(await listedIds('?description=alpha&revoked=false')).toEqual([ids.alpha]);
      expect(await listedIds('?description=no-such-text')).toEqual([]);
    });

    it('takes % and _ in the description filter literally', async () => {
      expect(await listedIds('?description=100%25')).toEqual([ids.pct]);
      expect(await listedIds('?description=a_b')).toEqual([ids.under]);
      // '_' must not match an arbitrary character ("r-b", "a b"...), '%' must not match anything.
      expect(await listedIds('?description=filter_')).toEqual([]);
      expect(await listedIds('?description=%25')).toEqual([ids.pct]);
      expect(await listedIds('?description=%5C')).toEqual([]);
    });

    it.each(['yes', 'TRUE', '1', ''])('refuses revoked=%p with 400 InvalidQueryArgument', async (value) => {
      expectError(await t.auth.keys(`?revoked=${value}`), 'InvalidQueryArgument');
    });

    it('refuses unknown query parameters and repeated filters with 400 InvalidQueryArgument', async () => {
      expectError(await t.auth.keys('?revoked=true&revoked=false'), 'InvalidQueryArgument');
      expectError(await t.auth.keys('?description=a&description=b'), 'InvalidQueryArgument');
    });

    it('needs Read on auth: 403 MissingPermissions otherwise, 401 without credentials', async () => {
      const writer = await createKey(t, {
        permissions: [
          { resource: 1, actions: ['Write'] },
          { resource: 2, actions: ['Read'] },
        ],
      });
      expectError(await t.auth.as(writer.key).keys(), 'MissingPermissions');
      expectError(await t.http().get('/auth/keys'), 'Unauthorized');
    });

    it('sets lastUsedAt once the key has been used', async () => {
      const { id, key } = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
      expect((await viewOf(id)).lastUsedAt ?? null).toBeNull();
      const before = Date.now();
      expect((await t.auth.as(key).keys()).status).toBe(200);
      const lastUsedAt = (await viewOf(id)).lastUsedAt;
      expect(lastUsedAt).toMatch(TIMESTAMP);
      expect(Date.parse(lastUsedAt!)).toBeGreaterThanOrEqual(before - 5_000);
    });

    it('sets lastUsedAt when the key is used through a token', async () => {
      const { id, key } = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
      await tokenFor(t, key);
      expect((await viewOf(id)).lastUsedAt).toMatch(TIMESTAMP);
    });
  });

  describe('POST /auth/keys/{api_key_id}/revoked', () => {
    it('revokes without a body or Content-Type (204), disables the key, and is idempotent', async () => {
      const { id, key } = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
      expect((await t.auth.as(key).keys()).status).toBe(200);
      // As the SDK sends it: Content-Length 0, no Content-Type.
      const first = await t.auth.post(`/auth/keys/${id}/revoked`).set('Content-Length', '0');
      expect(first.status).toBe(204);
      expect(first.text).toBe('');
      expect(first.headers['content-type']).toBeUndefined();
      expect((await viewOf(id)).revoked).toBe(true);
      expectError(await t.auth.as(key).keys(), 'Unauthorized');
      expectError(await t.auth.as(key).get('/auth/token'), 'Unauthorized');

      const {
        rows: [{ revoked_at: firstRevokedAt }],
      } = await db.query('SELECT revoked_at FROM auth_api_key WHERE id = $1', [id]);
      const again = await t.auth.revoke(id);
      expect(again.status).toBe(204);
      const {
        rows: [{ revoked_at: secondRevokedAt }],
      } = await db.query('SELECT revoked_at FROM auth_api_key WHERE id = $1', [id]);
      expect(secondRevokedAt).toEqual(firstRevokedAt);
    });

    it('accepts an empty JSON object body too', async () => {
      const { id } = await createKey(t, { permissions: [] });
      expect((await t.auth.post(`/auth/keys/${id}/revoked`).send({})).status).toBe(204);
    });

    it('answers an unknown key id with 404 NotFound', async () => {
      expectError(await t.auth.revoke(987654), 'NotFound');
      // Beyond the id column's range: still simply not there, never 500.
      expectError(await t.auth.revoke(9999999999), 'NotFound');
    });

    it.each(['abc', '0', '-1', '1.5', '01', '1e3', '%20', '99999999999999999999'])('refuses the malformed id %p with 400 InvalidPathArgument', async (id) => {
      expectError(await t.auth.revoke(id), 'InvalidPathArgument');
    });

    it('needs Write on auth: 403 MissingPermissions for a reader, 401 without credentials', async () => {
      const victim = await createKey(t, { permissions: [] });
      const reader = await createKey(t, { permissions: [{ resource: 1, actions: ['Read'] }] });
      expectError(await t.auth.as(reader.key).revoke(victim.id), 'MissingPermissions');
      expectError(await t.http().post(`/auth/keys/${victim.id}/revoked`), 'Unauthorized');
      expect((await viewOf(victim.id)).revoked).toBe(false);
    });

    it('a key may revoke itself; afterwards it is refused', async () => {
      const self = await createKey(t, { permissions: [{ resource: 1, actions: ['Write'] }] });
      expect((await t.auth.as(self.key).revoke(self.id)).status).toBe(204);
      expectError(await t.auth.as(self.key).revoke(self.id), 'Unauthorized');
    });
  });
});
