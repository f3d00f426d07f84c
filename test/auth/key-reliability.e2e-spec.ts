import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError } from '../support/clients/auth.js';
import { createKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const AUTH = 1;

/** Keys' reliability (extensions §18 "Inputs", "Keys"): at creation, on the view, by `PATCH /auth/keys/{id}`. */
describe('key reliability', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const keyView = async (id: number) => {
    const response = await t.auth.key(id).expect(200);
    return { view: response.body as Record<string, unknown>, tag: response.headers.etag as string };
  };
  const stored = async (id: number) =>
    (await t.db.query('SELECT (ARRAY[0, 25, 50, 50, 75, 100])[reliability + 1] AS reliability FROM auth_api_key WHERE id = $1', [id])).rows[0]
      .reliability as number;
  const keyCount = async () => Number((await t.db.query('SELECT count(*) FROM auth_api_key')).rows[0].count);

  describe('at creation', () => {
    it('defaults to F (the value 50), in the view and the listing', async () => {
      const { id } = await createKey(t, { permissions: [] });
      expect((await keyView(id)).view.reliability).toBe('F');
      expect(await stored(id)).toBe(50);
      const listing = await t.auth.keys('?limit=1000').expect(200);
      expect((listing.body as { id: number; reliability: string }[]).find((key) => key.id === id)?.reliability).toBe('F');
    });

    it.each([
      ['A', 100, 'A'],
      ['B', 75, 'B'],
      // C and F count alike (50), and each reads back as given.
      ['C', 50, 'C'],
      ['D', 25, 'D'],
      ['E', 0, 'E'],
      ['F', 50, 'F'],
    ])('takes %s, stores %i and shows %s', async (reliability, value, shown) => {
      const { id } = await createKey(t, { permissions: [], reliability });
      expect(await stored(id)).toBe(value);
      expect((await keyView(id)).view.reliability).toBe(shown);
    });

    it('refuses anything but A…F with 400 InvalidData naming reliability, and creates nothing', async () => {
      const before = await keyCount();
      for (const reliability of ['a', 'G', 'AB', '', 1, ['A'], { letter: 'A' }]) {
        const response = await t.auth.createKey({ permissions: [], reliability });
        expectError(response, 'InvalidData');
        expect(response.body.details.errors).toEqual([{ field: 'reliability', problems: [expect.stringContaining('reliability must be one of')] }]);
      }
      expect(await keyCount()).toBe(before);
    });

    it('lets any key that may create keys give any reliability, a less reliable one included', async () => {
      const creator = await createKey(t, { permissions: [{ resource: AUTH, actions: ['Read', 'Write'] }], reliability: 'E', maxTLP: 'TLP:GREEN' });
      const created = await t.auth.as(creator.key).createKey({ permissions: [], reliability: 'A' }).expect(201);
      expect((await keyView(created.body.id)).view.reliability).toBe('A');
    });
  });

  describe('PATCH /auth/keys/{id}', () => {
    it('sets reliability and answers 200 with the view and its new tag; {} and the same value keep the tag', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const { tag } = await keyView(id);
      const changed = await t.auth.updateKey(id, { reliability: 'B' }).expect(200);
      expect(changed.body).toEqual({ ...(await keyView(id)).view, reliability: 'B' });
      expect(changed.headers.etag).not.toBe(tag);
      expect(await stored(id)).toBe(75);

      for (const form of [{}, { reliability: 'B' }, { maxTLP: 'TLP:RED' }]) {
        const same = await t.auth.updateKey(id, form, changed.headers.etag).expect(200);
        expect([same.body.reliability, same.headers.etag]).toEqual(['B', changed.headers.etag]);
      }
      // C counts as F does, but is a judgement where F is none: from F to C is a change, kept as C.
      const { id: plain } = await createKey(t, { permissions: [] });
      const plainTag = (await keyView(plain)).tag;
      const judged = await t.auth.updateKey(plain, { reliability: 'C' }).expect(200);
      expect([judged.body.reliability, judged.headers.etag === plainTag, await stored(plain)]).toEqual(['C', false, 50]);
    });

    it('sets reliability and maxTLP together, and each alone keeps the other', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const both = await t.auth.updateKey(id, { reliability: 'A', maxTLP: 'TLP:GREEN' }).expect(200);
      expect([both.body.reliability, both.body.maxTLP]).toEqual(['A', 'TLP:GREEN']);
      const ceiling = await t.auth.updateKey(id, { maxTLP: 'TLP:AMBER' }).expect(200);
      expect([ceiling.body.reliability, ceiling.body.maxTLP]).toEqual(['A', 'TLP:AMBER']);
      const lower = await t.auth.updateKey(id, { reliability: 'E' }).expect(200);
      expect([lower.body.reliability, lower.body.maxTLP]).toEqual(['E', 'TLP:AMBER']);
      expect(await stored(id)).toBe(0);
    });

    it('honours If-Match when sent: a stale tag is 412 ResourceModified and changes nothing', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const { tag } = await keyView(id);
      await t.auth.updateKey(id, { reliability: 'D' }, tag).expect(200);
      expectError(await t.auth.updateKey(id, { reliability: 'A' }, tag), 'ResourceModified');
      expect((await keyView(id)).view.reliability).toBe('D');
      await t.auth.updateKey(id, { reliability: 'A' }).expect(200);
      expect((await keyView(id)).view.reliability).toBe('A');
    });

    it('refuses a bad reliability with 400 InvalidData naming it, and changes nothing (maxTLP sent beside it included)', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const before = await keyView(id);
      for (const form of [{ reliability: 'b' }, { reliability: 'Z' }, { reliability: 2 }, { reliability: 'A', maxTLP: 'TLP:GREEN', extra: 1 }]) {
        const response = await t.auth.updateKey(id, form, before.tag);
        expectError(response, 'InvalidData');
        const field = 'extra' in form ? 'extra' : 'reliability';
        expect(response.body.details.errors.map((error: { field: string }) => error.field)).toEqual([field]);
      }
      expect(await keyView(id)).toEqual(before);
    });

    it('requires Write on auth, as key creation does; a key may set any reliability, its own included', async () => {
      const reader = await createKey(t, { permissions: [{ resource: AUTH, actions: ['Read'] }] });
      const { id } = await createKey(t, { permissions: [] });
      expectError(await t.auth.as(reader.key).updateKey(id, { reliability: 'A' }), 'MissingPermissions');
      expect((await keyView(id)).view.reliability).toBe('F');

      const writer = await createKey(t, { permissions: [{ resource: AUTH, actions: ['Read', 'Write'] }], reliability: 'E' });
      expect((await t.auth.as(writer.key).updateKey(id, { reliability: 'A' }).expect(200)).body.reliability).toBe('A');
      expect((await t.auth.as(writer.key).updateKey(writer.id, { reliability: 'B' }).expect(200)).body.reliability).toBe('B');
    });

    it('is audited like every key change', async () => {
      const { id } = await createKey(t, { permissions: [] });
      await t.auth.updateKey(id, { reliability: 'B' }).set('X-Request-Id', 'patch-key-reliability').expect(200);
      const entries = (await t.auth.audit('?limit=1000').expect(200)).body as { requestID: string }[];
      expect(entries.filter((entry) => entry.requestID === 'patch-key-reliability')).toEqual([
        expect.objectContaining({ method: 'PATCH', route: '/auth/keys/:api_key_id', target: `auth/${id}`, status: 200 }),
      ]);
    });
  });
});
