import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCollection } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/auth.js';
import { createKey, tokenFor } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const AUTH = 1;
const INTEL = 2;
const domain = (value: string) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} });

/** Keys' TLP ceilings (`maxTLP`): at creation, on the view, by `PATCH /auth/keys/{id}`, and on the key's next request. */
describe('key ceilings (maxTLP)', () => {
  let t: TestApp;
  /** A key that may create and change keys, itself at TLP:GREEN. */
  let green: { id: number; key: string };

  beforeAll(async () => {
    t = await createTestApp();
    green = await createKey(t, { permissions: [{ resource: AUTH, actions: ['Read', 'Write'] }], maxTLP: 'TLP:GREEN' });
    await createCollection(t, 'marked');
    await t.intel.batch('marked', [domain('clear.example')]).expect(200);
    await t
      .http()
      .post('/intel/collections/marked/objects/batch?tlp=TLP:AMBER')
      .set('X-Api-Key', t.adminKey)
      .send([domain('amber.example')])
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
  });

  const keyView = async (id: number) => {
    const response = await t.auth.key(id).expect(200);
    return { view: response.body as Record<string, unknown>, tag: response.headers.etag as string };
  };
  const keyCount = async () => Number((await t.db.query('SELECT count(*) FROM auth_api_key')).rows[0].count);
  const listed = async (credential: string | { bearer: string }) => {
    const response = await t.intel.as(credential).get('/intel/collections/marked/objects').expect(200);
    return (response.body as { keys: { value: string }[] }[]).map((object) => object.keys[0].value).sort();
  };

  describe('at creation', () => {
    it('defaults to TLP:RED for an unrestricted creator, and the view always shows one of the five spellings', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const { view, tag } = await keyView(id);
      expect(view.maxTLP).toBe('TLP:RED');
      expect(tag).toMatch(/^"\d+"$/);
      const listing = await t.auth.keys('?limit=1000').expect(200);
      expect((listing.body as { id: number; maxTLP: string }[]).find((key) => key.id === id)?.maxTLP).toBe('TLP:RED');
    });

    it.each([
      ['tlp:green', 'TLP:GREEN'],
      ['TLP:WHITE', 'TLP:CLEAR'],
      [' Tlp:Amber+Strict ', 'TLP:AMBER+STRICT'],
    ])('takes %j and shows %s', async (input, shown) => {
      const { id } = await createKey(t, { permissions: [], maxTLP: input });
      expect((await keyView(id)).view.maxTLP).toBe(shown);
    });

    it('refuses a spelling that is no TLP level with 400 InvalidData naming maxTLP, and creates nothing', async () => {
      const before = await keyCount();
      for (const maxTLP of ['TLP:PURPLE', 'RED', 4, '']) {
        const response = await t.auth.createKey({ permissions: [], maxTLP });
        expectError(response, 'InvalidData');
        expect(response.body.details.errors).toEqual([{ field: 'maxTLP', problems: [expect.stringContaining('maxTLP must be one of TLP:CLEAR')] }]);
      }
      expect(await keyCount()).toBe(before);
    });

    it("gives a restricted creator's keys its own ceiling by default, and refuses a higher one as it refuses a permission it lacks", async () => {
      const created = await t.auth.as(green.key).createKey({ permissions: [] }).expect(201);
      expect((await keyView(created.body.id)).view.maxTLP).toBe('TLP:GREEN');
      const lower = await t.auth.as(green.key).createKey({ permissions: [], maxTLP: 'TLP:CLEAR' }).expect(201);
      expect((await keyView(lower.body.id)).view.maxTLP).toBe('TLP:CLEAR');

      const before = await keyCount();
      const higher = await t.auth.as(green.key).createKey({ permissions: [], maxTLP: 'TLP:AMBER' });
      expectError(higher, 'Forbidden');
      expect(higher.body.message).toBe("a key can only grant what it sees: maxTLP TLP:AMBER is above this key's own TLP:GREEN");
      expect(await keyCount()).toBe(before);
    });
  });

  describe('PATCH /auth/keys/{id}', () => {
    it('sets maxTLP and answers 200 with the view and its new tag; {} and the same value keep the tag', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const { tag } = await keyView(id);
      const changed = await t.auth.updateKey(id, { maxTLP: 'tlp:amber' }).expect(200);
      expect(changed.body).toEqual({ ...(await keyView(id)).view, maxTLP: 'TLP:AMBER' });
      expect(changed.headers.etag).not.toBe(tag);
      expect(changed.headers.etag).toBe((await keyView(id)).tag);

      for (const form of [{}, { maxTLP: 'TLP:AMBER' }]) {
        const same = await t.auth.updateKey(id, form, changed.headers.etag).expect(200);
        expect([same.body.maxTLP, same.headers.etag]).toEqual(['TLP:AMBER', changed.headers.etag]);
      }
    });

    it('honours If-Match when sent: a stale tag is 412 ResourceModified and changes nothing', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const { tag } = await keyView(id);
      await t.auth.updateKey(id, { maxTLP: 'TLP:GREEN' }, tag).expect(200);
      const stale = await t.auth.updateKey(id, { maxTLP: 'TLP:CLEAR' }, tag);
      expectError(stale, 'ResourceModified');
      expect((await keyView(id)).view.maxTLP).toBe('TLP:GREEN');
      // Without If-Match the change is made whatever the tag.
      await t.auth.updateKey(id, { maxTLP: 'TLP:CLEAR' }).expect(200);
      expect((await keyView(id)).view.maxTLP).toBe('TLP:CLEAR');
    });

    it('refuses an unknown member and a bad spelling with 400 InvalidData naming it, and changes nothing', async () => {
      const { id } = await createKey(t, { permissions: [] });
      const before = await keyView(id);
      for (const [form, field] of [
        [{ credibility: 1 }, 'credibility'],
        [{ maxTLP: 'TLP:GREEN', extra: true }, 'extra'],
        [{ maxTLP: 'TLP:BLACK' }, 'maxTLP'],
        [{ maxTLP: ['TLP:RED'] }, 'maxTLP'],
      ] as const) {
        const response = await t.auth.updateKey(id, form, before.tag);
        expectError(response, 'InvalidData');
        expect(response.body.details.errors.map((error: { field: string }) => error.field)).toEqual([field]);
      }
      expect(await keyView(id)).toEqual(before);
    });

    it('requires Write on auth, as key creation does, and never sets a ceiling above the caller’s own', async () => {
      const reader = await createKey(t, { permissions: [{ resource: AUTH, actions: ['Read'] }] });
      const { id } = await createKey(t, { permissions: [], maxTLP: 'TLP:CLEAR' });
      expectError(await t.auth.as(reader.key).updateKey(id, { maxTLP: 'TLP:GREEN' }), 'MissingPermissions');

      const raised = await t.auth.as(green.key).updateKey(id, { maxTLP: 'TLP:RED' });
      expectError(raised, 'Forbidden');
      expect(raised.body.message).toBe("a key can only grant what it sees: maxTLP TLP:RED is above this key's own TLP:GREEN");
      // Not even on itself; up to its own level it may.
      expectError(await t.auth.as(green.key).updateKey(green.id, { maxTLP: 'TLP:AMBER' }), 'Forbidden');
      expect((await t.auth.as(green.key).updateKey(id, { maxTLP: 'TLP:GREEN' }).expect(200)).body.maxTLP).toBe('TLP:GREEN');
    });

    it('checks in this order: 404, 412, 403', async () => {
      expectError(await t.auth.as(green.key).updateKey(999_999, { maxTLP: 'TLP:RED' }, '"1"'), 'NotFound');
      const { id } = await createKey(t, { permissions: [] });
      expectError(await t.auth.as(green.key).updateKey(id, { maxTLP: 'TLP:RED' }, '"999"'), 'ResourceModified');
      expectError(await t.auth.as(green.key).updateKey(id, { maxTLP: 'TLP:RED' }, (await keyView(id)).tag), 'Forbidden');
      expectError(await t.auth.key(999_999), 'NotFound');
      expectError(await t.auth.key('0'), 'InvalidPathArgument');
    });

    it('is audited like every key change', async () => {
      const { id } = await createKey(t, { permissions: [] });
      await t.auth.updateKey(id, { maxTLP: 'TLP:GREEN' }).set('X-Request-Id', 'patch-key-ceiling').expect(200);
      const entries = (await t.auth.audit('?limit=1000').expect(200)).body as { requestID: string }[];
      expect(entries.filter((entry) => entry.requestID === 'patch-key-ceiling')).toEqual([
        expect.objectContaining({ method: 'PATCH', route: '/auth/keys/:api_key_id', target: `auth/${id}`, status: 200 }),
      ]);
    });

    it("takes effect on the key's next request, with the key and with a token made from it", async () => {
      const reader = await createKey(t, { permissions: [{ resource: INTEL, actions: ['ReadChildren'] }] });
      const token = { bearer: await tokenFor(t, reader.key) };
      // Both credentials have the key's record cached now.
      expect(await listed(reader.key)).toEqual(['amber.example', 'clear.example']);
      expect(await listed(token)).toEqual(['amber.example', 'clear.example']);

      await t.auth.updateKey(reader.id, { maxTLP: 'TLP:GREEN' }).expect(200);
      expect(await listed(reader.key)).toEqual(['clear.example']);
      expect(await listed(token)).toEqual(['clear.example']);

      await t.auth.updateKey(reader.id, { maxTLP: 'TLP:AMBER' }).expect(200);
      expect(await listed(token)).toEqual(['amber.example', 'clear.example']);
    });
  });

  it("the key view's tag moves with revocation, once", async () => {
    const { id } = await createKey(t, { permissions: [] });
    const { tag } = await keyView(id);
    await t.auth.revoke(id).expect(204);
    const revoked = await keyView(id);
    expect(revoked.tag).not.toBe(tag);
    await t.auth.revoke(id).expect(204);
    expect((await keyView(id)).tag).toBe(revoked.tag);
  });
});
