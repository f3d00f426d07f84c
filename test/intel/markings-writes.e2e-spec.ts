import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExpiryService } from '../../src/intel/expiry.service.js';
import { expectError } from '../support/clients/api-client.js';
import { DEFAULT_SCORING_VIEW } from '../support/scoring.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createCollection, followAll, freshCollections, listAll, listedOf } from './objects.helpers.js';

/**
 * Native writes carry markings (extensions §19): the `tlp` parameter of single add, batch and import, else
 * the collection's `defaultTLP`, becomes the api claim's marking; every change record keeps the object's
 * marking after (`tlp`) and before (`was_tlp`) the change. Markings are read as ranks (0 CLEAR … 4 RED)
 * behind the API where no view shows them.
 */
describe('markings of native writes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    // Registers the test schema (size-schema) the collections below are created on.
    await createCollection(t, 'schema-holder');
  });
  afterAll(async () => {
    await t.close();
  });

  const freshCollection = freshCollections(() => t, 'marked');
  const domain = (value: string, context: Record<string, unknown> = {}) => ({ type: 'DomainName', keys: [{ type: 'DomainName', value }], context });
  const add = (c: string, body: unknown, tlp?: string) =>
    t
      .http()
      .post(`/intel/collections/${c}/objects`)
      .query(tlp === undefined ? {} : { tlp })
      .set('X-Api-Key', t.adminKey)
      .send(body as object);
  const batch = (c: string, items: unknown[], query = '') =>
    t
      .http()
      .post(`/intel/collections/${c}/objects/batch${query}`)
      .set('X-Api-Key', t.adminKey)
      .send(items as object);
  const importText = (c: string, text: string, query = '') =>
    t.http().post(`/intel/collections/${c}/import?format=text${query}`).set('X-Api-Key', t.adminKey).set('Content-Type', 'text/plain').send(text);

  /** The marking of the object holding the domain `value` and of its api claim (undefined: no such object). */
  async function marking(c: string, value: string): Promise<{ tlp: number; apiTlp: number | null } | undefined> {
    const { rows } = await t.db.query<{ tlp: number; apiTlp: number | null }>(
      `SELECT o.tlp, o.api_tlp AS "apiTlp" FROM intel_object o JOIN intel_collection c ON c.id = o.collection_id
        WHERE c.name = $1 AND o.keys @> $2::jsonb`,
      [c, JSON.stringify([{ value }])],
    );
    return rows[0];
  }

  /** The collection's change records in id order: `[operation, first key's value, tlp, was_tlp]`. */
  async function records(c: string): Promise<[string, string, number, number | null][]> {
    const { rows } = await t.db.query<{ operation: string; value: string; tlp: number; wasTlp: number | null }>(
      `SELECT ch.operation, ch.object->'keys'->0->>'value' AS value, ch.tlp, ch.was_tlp AS "wasTlp"
         FROM intel_change ch JOIN intel_collection c ON c.id = ch.collection_id WHERE c.name = $1 ORDER BY ch.id`,
      [c],
    );
    return rows.map((row) => [row.operation, row.value, row.tlp, row.wasTlp]);
  }

  /** A collection of the test schema with this registration form's `defaultTLP` (absent: none sent). */
  async function collectionWithDefault(name: string, defaultTLP?: unknown) {
    const response = await t.intel.createCollection({ name, schemaID: 'size-schema', ...(defaultTLP !== undefined && { defaultTLP }) });
    expect(response.status).toBe(201);
    return name;
  }

  describe('the tlp parameter', () => {
    it('marks a single add, case-insensitively, TLP:WHITE for TLP:CLEAR; the Add records it', async () => {
      const c = await freshCollection();
      await add(c, domain('amber.example'), 'TLP:AMBER').expect(204);
      await add(c, domain('strict.example'), 'tlp:amber+strict').expect(204);
      await add(c, domain('white.example'), 'TLP:WHITE').expect(204);
      await add(c, domain('red.example'), 'Tlp:Red').expect(204);
      expect(await marking(c, 'amber.example')).toEqual({ tlp: 2, apiTlp: 2 });
      expect(await marking(c, 'strict.example')).toEqual({ tlp: 3, apiTlp: 3 });
      expect(await marking(c, 'white.example')).toEqual({ tlp: 0, apiTlp: 0 });
      expect(await marking(c, 'red.example')).toEqual({ tlp: 4, apiTlp: 4 });
      expect(await records(c)).toEqual([
        ['Add', 'amber.example', 2, null],
        ['Add', 'strict.example', 3, null],
        ['Add', 'white.example', 0, null],
        ['Add', 'red.example', 4, null],
      ]);
    });

    it('marks every item of a batch, and records each change with the marking after and before it', async () => {
      const c = await freshCollection();
      await add(c, domain('stored.example'), 'TLP:RED').expect(204);
      const response = await batch(c, [domain('a.example'), domain('stored.example', { n: 1 }), domain('a.example', { n: 2 })], '?tlp=tlp:green');
      expect(response.status).toBe(200);
      expect(response.body.items.map((item: { status: string }) => item.status)).toEqual(['Added', 'Updated', 'Updated']);
      expect(await marking(c, 'a.example')).toEqual({ tlp: 1, apiTlp: 1 });
      expect(await marking(c, 'stored.example')).toEqual({ tlp: 1, apiTlp: 1 });
      expect(await records(c)).toEqual([
        ['Add', 'stored.example', 4, null],
        ['Add', 'a.example', 1, null],
        ['Update', 'stored.example', 1, 4],
        ['Update', 'a.example', 1, 1],
      ]);
    });

    it('marks every object of an import', async () => {
      const c = await freshCollection();
      const response = await importText(c, 'seen at evil.com and 192.0.2.7', '&tlp=TLP:AMBER%2BSTRICT');
      expect(response.status).toBe(200);
      expect(response.body.report).toMatchObject({ added: 2, failed: 0 });
      expect(await marking(c, 'evil.com')).toEqual({ tlp: 3, apiTlp: 3 });
      expect(await marking(c, '192.0.2.7')).toEqual({ tlp: 3, apiTlp: 3 });
      expect((await records(c)).map(([operation, , tlp, wasTlp]) => [operation, tlp, wasTlp])).toEqual([
        ['Add', 3, null],
        ['Add', 3, null],
      ]);
    });

    it('a later write sets the api claim to its own marking, lower ones included', async () => {
      const c = await freshCollection();
      await add(c, domain('lowered.example'), 'TLP:RED').expect(204);
      await add(c, domain('lowered.example', { n: 1 }), 'TLP:GREEN').expect(204);
      expect(await marking(c, 'lowered.example')).toEqual({ tlp: 1, apiTlp: 1 });
      await batch(c, [domain('lowered.example', { n: 2 })], '?tlp=TLP:CLEAR').expect(200);
      expect(await marking(c, 'lowered.example')).toEqual({ tlp: 0, apiTlp: 0 });
      expect(await records(c)).toEqual([
        ['Add', 'lowered.example', 4, null],
        ['Update', 'lowered.example', 1, 4],
        ['Update', 'lowered.example', 0, 1],
      ]);
    });

    it('a Remove records the marking the object had, deleted or expired', async () => {
      const c = await freshCollection();
      await add(c, domain('deleted.example'), 'TLP:AMBER').expect(204);
      await add(c, domain('batch-deleted.example'), 'TLP:GREEN').expect(204);
      await add(c, { ...domain('expiring.example'), expiresAt: new Date(Date.now() + 300).toISOString() }, 'TLP:RED').expect(204);
      await t.intel.remove(c, 'DomainName', 'deleted.example').expect(204);
      await batch(c, [{ remove: { type: 'DomainName', value: 'batch-deleted.example' } }]).expect(200);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await t.app.get(ExpiryService).expireDue();
      expect((await records(c)).filter(([operation]) => operation === 'Remove')).toEqual([
        ['Remove', 'deleted.example', 2, 2],
        ['Remove', 'batch-deleted.example', 1, 1],
        ['Remove', 'expiring.example', 4, 4],
      ]);
    });
  });

  describe("the collection's defaultTLP", () => {
    it('is TLP:CLEAR unless the registration names one; the views show it in its TLP 2.0 spelling', async () => {
      const plain = await collectionWithDefault('default-plain');
      const amber = await collectionWithDefault('default-amber', 'tlp:amber');
      const white = await collectionWithDefault('default-white', 'TLP:WHITE');
      expect((await t.intel.collection(plain)).body).toEqual({ name: plain, schemaID: 'size-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
      expect((await t.intel.collection(amber)).body).toEqual({ name: amber, schemaID: 'size-schema', defaultTLP: 'TLP:AMBER', scoring: DEFAULT_SCORING_VIEW });
      expect((await t.intel.collection(white)).body).toEqual({ name: white, schemaID: 'size-schema', defaultTLP: 'TLP:CLEAR', scoring: DEFAULT_SCORING_VIEW });
      const listed = await t.intel.collections('?limit=1000');
      expect(listed.body).toContainEqual({ name: amber, schemaID: 'size-schema', defaultTLP: 'TLP:AMBER', scoring: DEFAULT_SCORING_VIEW });
    });

    it('marks the native writes that name no marking: single add, batch and import', async () => {
      const c = await collectionWithDefault('default-writes', 'TLP:AMBER');
      await add(c, domain('single.example')).expect(204);
      await batch(c, [domain('batched.example')]).expect(200);
      await importText(c, 'imported.com').expect(200);
      await add(c, domain('named.example'), 'TLP:GREEN').expect(204);
      for (const value of ['single.example', 'batched.example', 'imported.com']) expect(await marking(c, value)).toEqual({ tlp: 2, apiTlp: 2 });
      expect(await marking(c, 'named.example')).toEqual({ tlp: 1, apiTlp: 1 });
    });

    it('a PATCH marks later writes only: stored objects keep their marking until a write re-marks them', async () => {
      const c = await collectionWithDefault('default-patched');
      await add(c, domain('before.example')).expect(204);
      const tag = (await t.intel.collection(c)).headers.etag as string;
      await t.intel.updateCollection(c, { defaultTLP: 'TLP:RED' }, tag).expect(204);
      const viewed = await t.intel.collection(c);
      expect(viewed.body).toEqual({ name: c, schemaID: 'size-schema', defaultTLP: 'TLP:RED', scoring: DEFAULT_SCORING_VIEW });
      expect(viewed.headers.etag).not.toBe(tag);
      expect(await marking(c, 'before.example')).toEqual({ tlp: 0, apiTlp: 0 });
      expect(await records(c)).toEqual([['Add', 'before.example', 0, null]]);

      await add(c, domain('after.example')).expect(204);
      expect(await marking(c, 'after.example')).toEqual({ tlp: 4, apiTlp: 4 });
      // The same object sent again naming no marking now takes the new default: a change of its marking.
      await add(c, domain('before.example')).expect(204);
      expect(await marking(c, 'before.example')).toEqual({ tlp: 4, apiTlp: 4 });
      expect((await records(c)).slice(1)).toEqual([
        ['Add', 'after.example', 4, null],
        ['Update', 'before.example', 4, 0],
      ]);
      // The current value again changes nothing and keeps the tag.
      const current = (await t.intel.collection(c)).headers.etag as string;
      await t.intel.updateCollection(c, { defaultTLP: 'tlp:red' }, current).expect(204);
      expect((await t.intel.collection(c)).headers.etag).toBe(current);
    });
  });

  describe('a bad marking is 400 InvalidData naming its field, and nothing is written', () => {
    const BAD = ['TLP:PURPLE', 'AMBER', '', 'TLP:AMBER STRICT'];

    it.each(BAD)('single add, batch and import with tlp=%j', async (bad) => {
      const c = await freshCollection();
      await add(c, domain('kept.example'), 'TLP:GREEN').expect(204);
      const before = await records(c);
      const refused = [
        await add(c, domain('kept.example', { n: 1 }), bad),
        await add(c, domain('new.example'), bad),
        await batch(c, [domain('kept.example', { n: 2 }), domain('batched.example')], `?tlp=${encodeURIComponent(bad)}`),
        await importText(c, 'imported.com', `&tlp=${encodeURIComponent(bad)}`),
      ];
      for (const response of refused) {
        expectError(response, 'InvalidData');
        expect(response.body.details).toEqual({ field: 'tlp' });
        expect(response.body.message).toMatch(/^tlp must be one of TLP:CLEAR/);
      }
      expect(await records(c)).toEqual(before);
      expect(await marking(c, 'kept.example')).toEqual({ tlp: 1, apiTlp: 1 });
      expect((await listAll(t, c, 100)).objects).toEqual([listedOf(domain('kept.example'), 'TLP:GREEN')]);
    });

    it('a repeated tlp parameter is no marking either', async () => {
      const c = await freshCollection();
      const response = await t
        .http()
        .post(`/intel/collections/${c}/objects?tlp=TLP:RED&tlp=TLP:RED`)
        .set('X-Api-Key', t.adminKey)
        .send(domain('twice.example'));
      expectError(response, 'InvalidData');
      expect(await records(c)).toEqual([]);
    });

    it.each([['TLP:BLUE'], [null], [2], ['']])('a collection form with defaultTLP %j: nothing registered or changed', async (bad) => {
      const name = `bad-default-${JSON.stringify(bad).replace(/\W/g, '') || 'empty'}`;
      const registered = await t.intel.createCollection({ name, schemaID: 'size-schema', defaultTLP: bad });
      expectError(registered, 'InvalidData');
      expect(registered.body.details.errors).toEqual([{ field: 'defaultTLP', problems: [expect.stringMatching(/^defaultTLP must be one of TLP:CLEAR/)] }]);
      expectError(await t.intel.collection(name), 'NotFound');

      await collectionWithDefault(name, 'TLP:GREEN');
      const tag = (await t.intel.collection(name)).headers.etag as string;
      const patched = await t.intel.updateCollection(name, { defaultTLP: bad, objectTTLSeconds: 60 }, tag);
      expectError(patched, 'InvalidData');
      const viewed = await t.intel.collection(name);
      expect(viewed.body).toEqual({ name, schemaID: 'size-schema', defaultTLP: 'TLP:GREEN', scoring: DEFAULT_SCORING_VIEW });
      expect(viewed.headers.etag).toBe(tag);
    });
  });

  describe('a change of the marking alone is an Update', () => {
    it('single adds: a marking-only re-send is recorded (and shown in the feed), an identical one is not', async () => {
      const c = await freshCollection();
      const start = (await listAll(t, c)).changesCursor;
      await add(c, domain('remarked.example', { n: 1 }), 'TLP:GREEN').expect(204);
      await add(c, domain('remarked.example', { n: 1 }), 'TLP:GREEN').expect(204);
      await add(c, domain('remarked.example', { n: 1 }), 'tlp:green').expect(204);
      await add(c, domain('remarked.example', { n: 1 }), 'TLP:AMBER').expect(204);
      await add(c, domain('remarked.example', { n: 1 }), 'TLP:AMBER').expect(204);
      const { changes } = await followAll(t, c, start);
      expect(changes.map((change) => change.operation)).toEqual(['Add', 'Update']);
      expect(changes[1]).toMatchObject({ operation: 'Update', object: domain('remarked.example', { n: 1 }) });
      expect(await records(c)).toEqual([
        ['Add', 'remarked.example', 1, null],
        ['Update', 'remarked.example', 2, 1],
      ]);
    });

    it('batches: Updated for a marking-only re-send, Unchanged with the same marking', async () => {
      const c = await freshCollection();
      await add(c, domain('b1.example'), 'TLP:GREEN').expect(204);
      await add(c, domain('b2.example'), 'TLP:RED').expect(204);
      const response = await batch(c, [domain('b1.example'), domain('b2.example'), domain('b2.example')], '?tlp=TLP:RED');
      expect(response.body).toMatchObject({ added: 0, updated: 1, unchanged: 2 });
      expect(response.body.items.map((item: { status: string }) => item.status)).toEqual(['Updated', 'Unchanged', 'Unchanged']);
      expect((await records(c)).slice(2)).toEqual([['Update', 'b1.example', 4, 1]]);
      // Sent again with the marking the first batch gave it: nothing to record.
      const again = await batch(c, [domain('b1.example'), domain('b2.example')], '?tlp=tlp:red');
      expect(again.body.items.map((item: { status: string }) => item.status)).toEqual(['Unchanged', 'Unchanged']);
      expect(await records(c)).toHaveLength(3);
    });
  });

  describe('concurrent re-markings of the same objects', () => {
    it("leave each object's marking equal to its last record's, every record's was_tlp its predecessor's tlp", async () => {
      const c = await freshCollection();
      const LEVELS = ['TLP:CLEAR', 'TLP:GREEN', 'TLP:AMBER', 'TLP:AMBER+STRICT', 'TLP:RED'];
      const values = ['x1.example', 'x2.example', 'x3.example'];
      const post = (path: string, body: unknown) =>
        fetch(`${t.url}/intel/collections/${c}/objects${path}`, {
          method: 'POST',
          headers: { 'X-Api-Key': t.adminKey, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      const writes: Promise<Response>[] = [];
      for (let n = 0; n < 60; n++) {
        const tlp = encodeURIComponent(LEVELS[(n * 7) % LEVELS.length]);
        // A batch records two changes of x1: the second's marking before is the first's after.
        const items = [...[...values].reverse().map((value) => domain(value, { n: n % 2 })), domain(values[0], { n: 2 })];
        if (n % 4 === 3) writes.push(post(`/batch?tlp=${tlp}`, items));
        else writes.push(post(`?tlp=${tlp}`, domain(values[n % values.length], { n: n % 2 })));
      }
      const statuses = (await Promise.all(writes)).map((response) => response.status);
      expect(statuses.every((status) => status === 204 || status === 200)).toBe(true);

      for (const value of values) {
        const { rows } = await t.db.query<{ operation: string; tlp: number; wasTlp: number | null }>(
          `SELECT ch.operation, ch.tlp, ch.was_tlp AS "wasTlp" FROM intel_change ch JOIN intel_collection c ON c.id = ch.collection_id
            WHERE c.name = $1 AND ch.object->'keys'->0->>'value' = $2 ORDER BY ch.id`,
          [c, value],
        );
        expect(rows.length).toBeGreaterThan(1);
        expect(rows[0]).toMatchObject({ operation: 'Add', wasTlp: null });
        for (let at = 1; at < rows.length; at++) {
          expect({ at, operation: rows[at].operation, wasTlp: rows[at].wasTlp }).toEqual({ at, operation: 'Update', wasTlp: rows[at - 1].tlp });
        }
        expect((await marking(c, value))?.tlp).toBe(rows[rows.length - 1].tlp);
      }
    });
  });
});
