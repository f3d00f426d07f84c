import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { freshCollections } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { sourceFactory } from '../support/factories.js';
import { STATEMENT_REF as STATEMENT, TLP1_REFS as TLP1, TLP2_REFS as TLP2 } from '../support/markings.js';
import type { TestApp } from '../support/test-app.js';
import type { FeedServer } from './feed-server.js';
import { runNow, withSourceApp } from './sources.helpers.js';

const ip = (n: number) => `198.51.100.${n}`;
const ips = (...n: number[]) => n.map(ip).join('\n') + '\n';

/** The TLP marking definitions of STIX 2.1, by version and level. */

const RANKS = ['TLP:CLEAR', 'TLP:GREEN', 'TLP:AMBER', 'TLP:AMBER+STRICT', 'TLP:RED'];

interface ChangeRow {
  operation: string;
  value: string;
  tlp: number;
  wasTlp: number | null;
  via: string;
  source: string | null;
}

/**
 * Markings that come from sources (extensions §19): a source's `tlp` raised by what each record carries, a
 * claim's marking, and an object's as the most restrictive of its live claims, its change records included.
 * Markings are read behind the API (intel_object.tlp, intel_change.tlp and was_tlp, sources_claim.tlp).
 */
describe('markings from sources', () => {
  let t: TestApp;
  let feed: FeedServer;
  withSourceApp((app) => ({ t, feed } = app));

  const fresh = freshCollections(() => t, 'marked');
  const { create: source, text } = sourceFactory(
    () => t,
    'marked',
    (path) => feed.url(path),
  );
  const run = (name: string) => runNow(t, name);

  /** Each object's first key value and marking (spelled), by value. */
  const markings = async (collection: string) =>
    Object.fromEntries(
      (
        await t.db.query(`SELECT o.keys->0->>'value' AS value, o.tlp FROM intel_object o JOIN intel_collection k ON k.id = o.collection_id WHERE k.name = $1`, [
          collection,
        ])
      ).rows.map((row: { value: string; tlp: number }) => [row.value, RANKS[row.tlp]]),
    );
  /** The change records of a collection in feed order, with their markings after and before (spelled). */
  const records = async (collection: string) =>
    (
      await t.db.query(
        `SELECT c.operation, c.object->'keys'->0->>'value' AS value, c.tlp, c.was_tlp AS "wasTlp", c.via, c.source FROM intel_change c
           JOIN intel_collection k ON k.id = c.collection_id WHERE k.name = $1 ORDER BY c.id`,
        [collection],
      )
    ).rows.map((row: ChangeRow) => ({ ...row, tlp: RANKS[row.tlp], wasTlp: row.wasTlp === null ? null : RANKS[row.wasTlp] }));
  /** A source's claims' markings (spelled), by value. */
  const claimMarkings = async (name: string) =>
    Object.fromEntries(
      (await t.db.query(`SELECT c.value, c.tlp FROM sources_claim c JOIN sources_source s ON s.id = c.source_id WHERE s.name = $1`, [name])).rows.map(
        (row: { value: string; tlp: number }) => [row.value, RANKS[row.tlp]],
      ),
    );

  describe('the source form', () => {
    it('marks TLP:CLEAR unless told; takes any case and TLP:WHITE; anything else is 400 InvalidData naming tlp, and nothing changes', async () => {
      const c = await fresh();
      feed.list('/form.txt', ips(1));
      const plain = await text(c, '/form.txt');
      expect((await t.sources.source(plain)).body).toMatchObject({ tlp: 'TLP:CLEAR' });
      const strict = await text(c, '/form.txt', { tlp: 'tlp:amber+strict' });
      expect((await t.sources.source(strict)).body).toMatchObject({ tlp: 'TLP:AMBER+STRICT' });

      for (const tlp of ['TLP:ORANGE', 'red', 3, null]) {
        const refused = await t.sources.create({ name: 'refused', collection: c, kind: 'text', url: feed.url('/form.txt'), tlp });
        expectError(refused, 'InvalidData');
        expect(refused.body.details).toEqual({ field: 'tlp' });
      }
      expect((await t.sources.source('refused')).status).toBe(404);

      expectError(await t.sources.update(strict, { tlp: 'TLP:PURPLE' }, '"1"'), 'InvalidData');
      const kept = await t.sources.source(strict);
      expect(kept.headers.etag).toBe('"1"');
      expect(kept.body).toMatchObject({ tlp: 'TLP:AMBER+STRICT' });
      expect((await t.sources.update(strict, { tlp: 'TLP:WHITE' }, '"1"')).status).toBe(204);
      expect((await t.sources.source(strict)).body).toMatchObject({ tlp: 'TLP:CLEAR' });
      // A PATCH without tlp keeps it.
      expect((await t.sources.update(strict, { tlp: 'TLP:GREEN' }, '"2"')).status).toBe(204);
      expect((await t.sources.update(strict, { intervalSeconds: 600 }, '"3"')).status).toBe(204);
      expect((await t.sources.source(strict)).body).toMatchObject({ tlp: 'TLP:GREEN', intervalSeconds: 600 });
    });
  });

  describe("a record's marking", () => {
    it('a csv source marked TLP:AMBER: its claims, objects and their Add records are AMBER', async () => {
      const c = await fresh();
      feed.list('/amber.csv', `# ioc,kind\n${ip(1)},c2\n${ip(2)},c2\n`);
      const name = await source({ collection: c, kind: 'csv', url: feed.url('/amber.csv'), valueColumn: 'ioc', contextColumns: ['kind'], tlp: 'TLP:AMBER' });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 2 });
      expect(await claimMarkings(name)).toEqual({ [ip(1)]: 'TLP:AMBER', [ip(2)]: 'TLP:AMBER' });
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:AMBER', [ip(2)]: 'TLP:AMBER' });
      expect(await records(c)).toEqual([1, 2].map((n) => ({ operation: 'Add', value: ip(n), tlp: 'TLP:AMBER', wasTlp: null, via: 'source', source: name })));
    });

    it("a taxii21 source: each indicator's TLP 1.0 or 2.0 refs raise the source's tlp (several: the most restrictive; others ignored)", async () => {
      const c = await fresh();
      const indicator = (n: number, refs?: string[]) => ({
        type: 'indicator',
        spec_version: '2.1',
        id: `indicator--${randomUUID()}`,
        created: '2026-01-01T00:00:00.000Z',
        modified: '2026-01-01T00:00:00.000Z',
        pattern_type: 'stix',
        pattern: `[ipv4-addr:value = '${ip(n)}']`,
        valid_from: '2026-01-01T00:00:00.000Z',
        ...(refs !== undefined && { object_marking_refs: refs }),
      });
      const objects = [
        { type: 'marking-definition', spec_version: '2.1', id: TLP2.AMBER, created: '2022-10-01T00:00:00.000Z', name: 'TLP:AMBER', extensions: {} },
        indicator(1, [TLP1.AMBER]),
        indicator(2, [TLP2['AMBER+STRICT']]),
        indicator(3, [TLP2.GREEN, TLP1.RED, STATEMENT]),
        indicator(4, [STATEMENT]),
        indicator(5),
        indicator(6, [TLP1.WHITE]),
      ];
      feed.routes.set('/taxii/api/collections/partner/objects/', {
        body: JSON.stringify({ objects, more: false }),
        headers: { 'content-type': 'application/taxii+json;version=2.1', 'x-taxii-date-added-last': '2026-01-01T00:00:00.000001Z' },
      });
      const name = await source({ collection: c, kind: 'taxii21', url: feed.url('/taxii/api/'), collectionID: 'partner', tlp: 'TLP:GREEN' });
      expect(await run(name)).toMatchObject({ outcome: 'ok', items: 6, added: 6, rejected: 0 });
      const expected = {
        [ip(1)]: 'TLP:AMBER',
        [ip(2)]: 'TLP:AMBER+STRICT',
        [ip(3)]: 'TLP:RED',
        [ip(4)]: 'TLP:GREEN',
        [ip(5)]: 'TLP:GREEN',
        [ip(6)]: 'TLP:GREEN',
      };
      expect(await claimMarkings(name)).toEqual(expected);
      expect(await markings(c)).toEqual(expected);
      expect(Object.fromEntries((await records(c)).map((record) => [record.value, record.tlp]))).toEqual(expected);
    });

    it("a misp source: the most restrictive of the source's tlp, the event's and the attribute's tlp: tags", async () => {
      const c = await fresh();
      const tags = (...names: string[]) => names.map((tagName) => ({ name: tagName }));
      const attribute = (n: number, extra: Record<string, unknown> = {}) => ({ uuid: randomUUID(), type: 'ip-dst', value: ip(n), to_ids: true, ...extra });
      const events = {
        green: {
          Event: {
            uuid: randomUUID(),
            timestamp: '1',
            Tag: tags('tlp:green', 'type:OSINT'),
            Attribute: [attribute(1), attribute(2, { Tag: tags('TLP:AMBER') }), attribute(3, { Tag: tags('tlp:white') })],
            Object: [{ name: 'domain-ip', Attribute: [attribute(4, { Tag: tags('tlp:red') })] }],
          },
        },
        untagged: { Event: { uuid: randomUUID(), timestamp: '1', Attribute: [attribute(5), attribute(6, { Tag: tags('tlp:amber+strict') })] } },
      };
      const manifest = Object.fromEntries(Object.values(events).map((event) => [event.Event.uuid, { timestamp: event.Event.timestamp }]));
      feed.routes.set('/misp/manifest.json', { body: JSON.stringify(manifest), headers: { 'content-type': 'application/json' } });
      for (const event of Object.values(events))
        feed.routes.set(`/misp/${event.Event.uuid}.json`, { body: JSON.stringify(event), headers: { 'content-type': 'application/json' } });
      const name = await source({ collection: c, kind: 'misp', url: feed.url('/misp/') });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 6 });
      const expected = {
        [ip(1)]: 'TLP:GREEN',
        [ip(2)]: 'TLP:AMBER',
        [ip(3)]: 'TLP:GREEN',
        [ip(4)]: 'TLP:RED',
        [ip(5)]: 'TLP:CLEAR',
        [ip(6)]: 'TLP:AMBER+STRICT',
      };
      expect(await claimMarkings(name)).toEqual(expected);
      expect(await markings(c)).toEqual(expected);

      // 198.51.100.1 in an AMBER event too: AMBER. Then the GREEN event alone is read again (its timestamp
      // moved): the AMBER event, not read again, still marks it.
      const amber = { Event: { uuid: randomUUID(), timestamp: '1', Tag: tags('tlp:amber'), Attribute: [attribute(1)] } };
      feed.routes.set(`/misp/${amber.Event.uuid}.json`, { body: JSON.stringify(amber), headers: { 'content-type': 'application/json' } });
      const serve = (changed: Record<string, string>) =>
        feed.routes.set('/misp/manifest.json', {
          body: JSON.stringify({
            ...manifest,
            [amber.Event.uuid]: { timestamp: '1' },
            ...Object.fromEntries(Object.entries(changed).map(([uuid, at]) => [uuid, { timestamp: at }])),
          }),
          headers: { 'content-type': 'application/json' },
        });
      serve({});
      expect(await run(name)).toMatchObject({ outcome: 'ok' });
      expect((await markings(c))[ip(1)]).toBe('TLP:AMBER');
      events.green.Event.timestamp = '2';
      feed.routes.set(`/misp/${events.green.Event.uuid}.json`, { body: JSON.stringify(events.green), headers: { 'content-type': 'application/json' } });
      serve({ [events.green.Event.uuid]: '2' });
      expect(await run(name)).toMatchObject({ outcome: 'ok' });
      expect((await claimMarkings(name))[ip(1)]).toBe('TLP:AMBER');
      expect((await markings(c))[ip(1)]).toBe('TLP:AMBER');
    });
  });

  describe("an object's marking: the most restrictive of its live claims", () => {
    it('a value a CLEAR and a RED source both list is RED (an Update of the RED source), and CLEAR again once the RED claim ends', async () => {
      const c = await fresh();
      feed.list('/clear.txt', ips(1, 2));
      feed.list('/red.txt', ips(1, 3));
      const clear = await text(c, '/clear.txt');
      const red = await text(c, '/red.txt', { tlp: 'TLP:RED', maxRemovalRatio: 1 });
      expect(await run(clear)).toMatchObject({ outcome: 'ok', added: 2 });
      // The RED source lists 198.51.100.1 as it is stored (no context): unchanged, but re-marked RED.
      expect(await run(red)).toMatchObject({ outcome: 'ok', added: 1, updated: 0 });
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:RED', [ip(2)]: 'TLP:CLEAR', [ip(3)]: 'TLP:RED' });
      const raised = { operation: 'Update', value: ip(1), tlp: 'TLP:RED', wasTlp: 'TLP:CLEAR', via: 'source', source: red };
      expect((await records(c)).slice(2)).toEqual([{ operation: 'Add', value: ip(3), tlp: 'TLP:RED', wasTlp: null, via: 'source', source: red }, raised]);

      // The same bodies again: nothing moves.
      expect(await run(red)).toMatchObject({ outcome: 'unchanged' });
      expect(await run(clear)).toMatchObject({ outcome: 'unchanged' });
      expect(await records(c)).toHaveLength(4);

      // The RED source drops it: its claim ends, the CLEAR one still holds it, CLEAR again (the RED source's Update).
      feed.list('/red.txt', ips(3));
      expect(await run(red)).toMatchObject({ outcome: 'ok', withdrawn: 0 });
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:CLEAR', [ip(2)]: 'TLP:CLEAR', [ip(3)]: 'TLP:RED' });
      expect((await records(c)).slice(4)).toEqual([{ operation: 'Update', value: ip(1), tlp: 'TLP:CLEAR', wasTlp: 'TLP:RED', via: 'source', source: red }]);

      // Listed by both again, then the RED source deleted: its claims end with it, and so does the marking.
      feed.list('/red.txt', ips(1, 3));
      expect(await run(red)).toMatchObject({ outcome: 'ok' });
      expect((await markings(c))[ip(1)]).toBe('TLP:RED');
      expect((await t.sources.remove(red)).status).toBe(204);
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:CLEAR', [ip(2)]: 'TLP:CLEAR' });
      expect((await records(c)).slice(-2)).toEqual([
        { operation: 'Remove', value: ip(3), tlp: 'TLP:RED', wasTlp: 'TLP:RED', via: 'source', source: red },
        { operation: 'Update', value: ip(1), tlp: 'TLP:CLEAR', wasTlp: 'TLP:RED', via: 'source', source: red },
      ]);
    });

    it("a source that rewrites an object marks it in the same record; an object a source's claim outlived is added at that claim's marking", async () => {
      const c = await fresh();
      feed.list('/plain.txt', ips(1));
      feed.list('/partner.txt', ips(1, 2));
      const plain = await text(c, '/plain.txt', { context: { feed: 'plain' } });
      const partner = await text(c, '/partner.txt', { context: { feed: 'partner' }, tlp: 'TLP:AMBER' });
      expect(await run(plain)).toMatchObject({ added: 1 });
      // Another context: the partner's run updates the object, and that one Update carries AMBER.
      expect(await run(partner)).toMatchObject({ added: 1, updated: 1 });
      expect((await records(c)).filter((record) => record.value === ip(1))).toEqual([
        { operation: 'Add', value: ip(1), tlp: 'TLP:CLEAR', wasTlp: null, via: 'source', source: plain },
        { operation: 'Update', value: ip(1), tlp: 'TLP:AMBER', wasTlp: 'TLP:CLEAR', via: 'source', source: partner },
      ]);

      // 198.51.100.2 deleted natively: the partner's claim stays. The plain source lists it next: its Add is AMBER.
      expect((await t.intel.remove(c, 'IPAddress', ip(2))).status).toBe(204);
      feed.list('/plain.txt', ips(1, 2));
      expect(await run(plain)).toMatchObject({ added: 1 });
      expect((await records(c)).at(-1)).toEqual({ operation: 'Add', value: ip(2), tlp: 'TLP:AMBER', wasTlp: null, via: 'source', source: plain });
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:AMBER', [ip(2)]: 'TLP:AMBER' });
    });

    it("a change of a source's tlp re-marks what it claims with its next run, though the body is the same", async () => {
      const c = await fresh();
      feed.list('/remarked.txt', ips(1, 2));
      const name = await text(c, '/remarked.txt');
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 2 });
      expect((await t.sources.update(name, { tlp: 'TLP:GREEN' }, '"1"')).status).toBe(204);
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 0, updated: 0 });
      expect(await claimMarkings(name)).toEqual({ [ip(1)]: 'TLP:GREEN', [ip(2)]: 'TLP:GREEN' });
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:GREEN', [ip(2)]: 'TLP:GREEN' });
      expect((await records(c)).slice(2)).toEqual(
        [1, 2].map((n) => ({ operation: 'Update', value: ip(n), tlp: 'TLP:GREEN', wasTlp: 'TLP:CLEAR', via: 'source', source: name })),
      );
    });

    it("a native write and a source claim: the most restrictive of the two; the api claim's marking stays when the source's claim ends", async () => {
      const c = await fresh();
      const add = (n: number, tlp: string) =>
        t
          .http()
          .post(`/intel/collections/${c}/objects`)
          .query({ tlp })
          .set('X-Api-Key', t.adminKey)
          .send({ type: 'IPAddress', keys: [{ type: 'IPAddress', value: ip(n) }], context: {} });
      await add(1, 'TLP:AMBER').expect(204);
      feed.list('/mixed.txt', ips(1, 2));
      const name = await text(c, '/mixed.txt', { tlp: 'TLP:GREEN', maxRemovalRatio: 1 });
      expect(await run(name)).toMatchObject({ added: 1, updated: 0 });
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:AMBER', [ip(2)]: 'TLP:GREEN' });
      // A native write lowers the api claim: the source's GREEN claim is now the most restrictive.
      await add(1, 'TLP:CLEAR').expect(204);
      // A native RED write over the source's GREEN: RED.
      await add(2, 'TLP:RED').expect(204);
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:GREEN', [ip(2)]: 'TLP:RED' });
      // The source drops both: the api claims keep the objects, each at its api claim's marking.
      feed.list('/mixed.txt', ips(3));
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 1, withdrawn: 0 });
      expect(await markings(c)).toEqual({ [ip(1)]: 'TLP:CLEAR', [ip(2)]: 'TLP:RED', [ip(3)]: 'TLP:GREEN' });
      expect((await records(c)).filter((record) => record.source === name && record.operation === 'Update')).toEqual([
        { operation: 'Update', value: ip(1), tlp: 'TLP:CLEAR', wasTlp: 'TLP:GREEN', via: 'source', source: name },
      ]);

      // Deleted natively, the source's claim outlives the object: added again natively (single add, batch), it is
      // marked by that claim in its very Add.
      expect((await t.intel.remove(c, 'IPAddress', ip(3))).status).toBe(204);
      await add(3, 'TLP:CLEAR').expect(204);
      expect((await t.intel.remove(c, 'IPAddress', ip(3))).status).toBe(204);
      const batch = await t
        .http()
        .post(`/intel/collections/${c}/objects/batch`)
        .query({ tlp: 'TLP:CLEAR' })
        .set('X-Api-Key', t.adminKey)
        .send([{ type: 'IPAddress', keys: [{ type: 'IPAddress', value: ip(3) }], context: {} }]);
      expect(batch.body).toMatchObject({ added: 1 });
      expect((await records(c)).filter((record) => record.value === ip(3) && record.operation === 'Add')).toEqual(
        ['source', 'api', 'batch'].map((via) => ({
          operation: 'Add',
          value: ip(3),
          tlp: 'TLP:GREEN',
          wasTlp: null,
          via,
          source: via === 'source' ? name : null,
        })),
      );
    });
  });
});
