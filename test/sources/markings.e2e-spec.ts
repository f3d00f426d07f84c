import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { freshCollections } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { sourceFactory } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import type { FeedServer } from './feed-server.js';
import { runNow, withSourceApp } from './sources.helpers.js';

const ip = (n: number) => `198.51.100.${n}`;
const ips = (...n: number[]) => n.map(ip).join('\n') + '\n';

/** The TLP marking definitions of STIX 2.1, by version and level. */
const TLP1 = {
  WHITE: 'marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9',
  AMBER: 'marking-definition--f88d31f6-486f-44da-b317-01333bde0b82',
  RED: 'marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed',
};
const TLP2 = {
  GREEN: 'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb',
  AMBER: 'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421',
  'AMBER+STRICT': 'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003',
};
/** A marking definition that is no TLP (a statement): ignored. */
const STATEMENT = 'marking-definition--1d7a6c1f-0b1c-4a5e-9f3d-2b8e7c6a5d4f';

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
    });
  });
});
