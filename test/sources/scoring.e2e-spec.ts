import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { scoreSql } from '../../src/scoring/score-sql.js';
import { freshCollections } from '../intel/objects.helpers.js';
import { expectError } from '../support/clients/api-client.js';
import { sourceFactory } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import type { FeedServer } from './feed-server.js';
import { runNow, withSourceApp } from './sources.helpers.js';

const ip = (n: number) => `192.0.2.${n}`;
const ips = (...n: number[]) => n.map(ip).join('\n') + '\n';
const JSON_TYPE = { 'content-type': 'application/json' };

/**
 * The scores' inputs that come from sources (extensions §18): a source's Admiralty code, each record's own
 * credibility by kind, and the anchor of its claims. Scores are read in SQL with `scoreSql` (src/scoring/score-sql.ts)
 * (behind the API): the listing's `score` member is tested with the objects' views.
 */
describe('sources as score inputs', () => {
  let t: TestApp;
  let feed: FeedServer;
  withSourceApp((app) => ({ t, feed } = app));

  const fresh = freshCollections(() => t, 'scored');
  const { create: source, text } = sourceFactory(
    () => t,
    'scored',
    (path) => feed.url(path),
  );
  const run = (name: string) => runNow(t, name);

  /**
   * Each object's score at `at` (an SQL timestamptz expression), by its first key's value; unless told, a day
   * before its anchor, undecayed (a second after it, an IPAddress at speed 2 has decayed by 0.05%).
   */
  const scores = async (collection: string, at = `now() - interval '1 day'`) =>
    Object.fromEntries(
      (
        await t.db.query(
          `SELECT o.keys->0->>'value' AS value, ${scoreSql('o', at)} AS score FROM intel_object o
             JOIN intel_collection k ON k.id = o.collection_id WHERE k.name = $1`,
          [collection],
        )
      ).rows.map((row: { value: string; score: number }) => [row.value, row.score]),
    );
  /** A source's claims' own credibility (null: the source's), by value. */
  const credibilities = async (name: string) =>
    Object.fromEntries(
      (await t.db.query(`SELECT c.value, c.credibility FROM sources_claim c JOIN sources_source s ON s.id = c.source_id WHERE s.name = $1`, [name])).rows.map(
        (row: { value: string; credibility: number | null }) => [row.value, row.credibility],
      ),
    );
  const scoreVersion = async () => Number((await t.db.query(`SELECT coalesce(sum(total), 0) AS v FROM score_tally`)).rows[0].v);
  const admiraltyColumns = async (name: string) =>
    (await t.db.query(`SELECT reliability, credibility FROM sources_source WHERE name = $1`, [name])).rows[0] as { reliability: number; credibility: number };

  describe('the form', () => {
    it('F and 6 unless told; shown in the view, stored as values, changed by PATCH (the score version moves with the values)', async () => {
      const c = await fresh();
      feed.list('/form.txt', ips(1));
      const plain = await text(c, '/form.txt');
      const view = (await t.sources.source(plain)).body as Record<string, unknown>;
      expect(view).toMatchObject({ reliability: 'F', credibility: 6 });
      expect(view).not.toHaveProperty('credibilityField');
      expect(await admiraltyColumns(plain)).toEqual({ reliability: 50, credibility: 50 });

      const rated = await text(c, '/form.txt', { reliability: 'B', credibility: 2 });
      expect((await t.sources.source(rated)).body).toMatchObject({ reliability: 'B', credibility: 2 });
      expect(await admiraltyColumns(rated)).toEqual({ reliability: 75, credibility: 75 });

      let version = await scoreVersion();
      expect((await t.sources.update(rated, { reliability: 'D' }, '"1"')).status).toBe(204);
      expect((await t.sources.source(rated)).body).toMatchObject({ reliability: 'D', credibility: 2 });
      expect(await admiraltyColumns(rated)).toEqual({ reliability: 25, credibility: 75 });
      expect(await scoreVersion()).toBeGreaterThan(version);
      // C and F count alike (50): the view keeps the letter given, the score version stays.
      expect((await t.sources.update(plain, { reliability: 'C' }, '"1"')).status).toBe(204);
      version = await scoreVersion();
      expect((await t.sources.update(plain, { reliability: 'F', intervalSeconds: 600 }, '"2"')).status).toBe(204);
      expect((await t.sources.source(plain)).body).toMatchObject({ reliability: 'F', intervalSeconds: 600 });
      expect(await scoreVersion()).toBe(version);
    });

    it('a bad member is 400 InvalidData naming it, and nothing changes', async () => {
      const c = await fresh();
      feed.list('/bad.csv', `ioc,cred\n${ip(1)},1\n`);
      const csv = await source({ collection: c, kind: 'csv', url: feed.url('/bad.csv'), valueColumn: 'ioc' });
      const refusals: [Record<string, unknown>, string][] = [
        [{ kind: 'text', reliability: 'G' }, 'reliability'],
        [{ kind: 'text', reliability: 'a' }, 'reliability'],
        [{ kind: 'text', reliability: null }, 'reliability'],
        [{ kind: 'text', credibility: 7 }, 'credibility'],
        [{ kind: 'text', credibility: 0 }, 'credibility'],
        [{ kind: 'text', credibility: '1' }, 'credibility'],
        [{ kind: 'text', credibility: 1.5 }, 'credibility'],
        [{ kind: 'text', credibilityField: 'cred' }, 'credibilityField'],
        [{ kind: 'taxii21', collectionID: 'x', credibilityField: 'confidence' }, 'credibilityField'],
        [{ kind: 'misp', credibilityScale: 'percent' }, 'credibilityScale'],
        [{ kind: 'csv', valueColumn: 'ioc', credibilityField: '' }, 'credibilityField'],
        [{ kind: 'csv', valueColumn: 'ioc', credibilityField: 'cred', credibilityScale: 'nato' }, 'credibilityScale'],
        [{ kind: 'ndjson', valueField: 'ioc', credibilityScale: 'percent' }, 'credibilityScale'],
      ];
      for (const [form, field] of refusals) {
        const refused = await t.sources.create({ name: 'refused', collection: c, url: feed.url('/bad.csv'), ...form });
        expectError(refused, 'InvalidData');
        expect(refused.body.details).toEqual({ field });
      }
      const onText = await t.sources.create({ name: 'refused', collection: c, kind: 'text', url: feed.url('/bad.csv'), credibilityField: 'cred' });
      expect(onText.body.message).toMatch(/only taken by csv and ndjson/);
      expect((await t.sources.source('refused')).status).toBe(404);

      for (const [patch, field] of [
        [{ reliability: 'Z' }, 'reliability'],
        [{ credibility: 9 }, 'credibility'],
        [{ credibilityScale: 'percent' }, 'credibilityScale'],
      ] as const) {
        const refused = await t.sources.update(csv, patch, '"1"');
        expectError(refused, 'InvalidData');
        expect(refused.body.details).toEqual({ field });
      }
      const kept = await t.sources.source(csv);
      expect(kept.headers.etag).toBe('"1"');
      expect(kept.body).toMatchObject({ reliability: 'F', credibility: 6 });
      expect(await admiraltyColumns(csv)).toEqual({ reliability: 50, credibility: 50 });

      // A field with its scale, shown; `null` clears both.
      expect((await t.sources.update(csv, { credibilityField: 'cred', credibilityScale: 'percent' }, '"1"')).status).toBe(204);
      expect((await t.sources.source(csv)).body).toMatchObject({ credibilityField: 'cred', credibilityScale: 'percent' });
      expect((await t.sources.update(csv, { credibilityField: null }, '"2"')).status).toBe(204);
      const cleared = (await t.sources.source(csv)).body as Record<string, unknown>;
      expect(cleared).not.toHaveProperty('credibilityField');
      expect(cleared).not.toHaveProperty('credibilityScale');
    });
  });

  describe('scores', () => {
    it("a source's strength is its score; two sources corroborate; a PATCH of reliability moves the scores", async () => {
      const c = await fresh();
      feed.list('/best.txt', ips(1));
      const best = await text(c, '/best.txt', { reliability: 'A', credibility: 1 });
      expect(await run(best)).toMatchObject({ outcome: 'ok', added: 1 });
      expect(await scores(c)).toEqual({ [ip(1)]: 100 });

      feed.list('/b2.txt', ips(2, 3));
      feed.list('/c3.txt', ips(2));
      const b2 = await text(c, '/b2.txt', { reliability: 'B', credibility: 2 });
      const c3 = await text(c, '/c3.txt', { reliability: 'C', credibility: 3 });
      let version = await scoreVersion();
      expect(await run(b2)).toMatchObject({ outcome: 'ok', added: 2 });
      expect(await scoreVersion()).toBeGreaterThan(version);
      expect(await scores(c)).toMatchObject({ [ip(2)]: 75, [ip(3)]: 75 });
      // The second claim changes no object (no change record): the score version says the score moved.
      version = await scoreVersion();
      expect(await run(c3)).toMatchObject({ outcome: 'ok', added: 0 });
      expect(await scoreVersion()).toBeGreaterThan(version);
      // 100 × (1 − (1 − 0.75) × (1 − 0.5)) = 87.5, reported 88.
      expect(await scores(c)).toMatchObject({ [ip(2)]: 88, [ip(3)]: 75 });

      // C (50) to A (100): 3 is (100 + 50) / 2 = 75 alone; 2 with B/2: 100 × (1 − 0.25 × 0.25) = 93.75.
      const tag = (await t.sources.source(c3)).headers.etag as string;
      expect((await t.sources.update(c3, { reliability: 'A' }, tag)).status).toBe(204);
      expect(await scores(c)).toMatchObject({ [ip(2)]: 94, [ip(3)]: 75 });
      expect((await t.sources.update(b2, { credibility: 5, reliability: 'E' }, '"1"')).status).toBe(204);
      // E/5: strength 0, no corroboration left.
      expect(await scores(c)).toMatchObject({ [ip(2)]: 75, [ip(3)]: 0 });
    });

    it("csv: each row's credibility column in the Admiralty scale; a missing or out-of-scale cell takes the source's; a change of it alone rewrites the claim", async () => {
      const c = await fresh();
      const body = (one: number) => `ioc,cred\n${ip(1)},${one}\n${ip(2)},5\n${ip(3)},9\n${ip(4)},\n${ip(5)},x\n`;
      feed.list('/cred.csv', body(1));
      const name = await source({ collection: c, kind: 'csv', url: feed.url('/cred.csv'), valueColumn: 'ioc', credibilityField: 'cred', reliability: 'A' });
      expect((await t.sources.source(name)).body).toMatchObject({ credibilityField: 'cred', credibilityScale: 'admiralty' });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 5, rejected: 0 });
      expect(await credibilities(name)).toEqual({ [ip(1)]: 100, [ip(2)]: 0, [ip(3)]: null, [ip(4)]: null, [ip(5)]: null });
      // A 100 with 1 100 → 100; with 5 0 → 50; with the source's 6 (50) → 75.
      expect(await scores(c)).toEqual({ [ip(1)]: 100, [ip(2)]: 50, [ip(3)]: 75, [ip(4)]: 75, [ip(5)]: 75 });

      // The same objects, one credibility changed: no repeat of the body, the claim rewritten, the score moved.
      feed.list('/cred.csv', body(3));
      const version = await scoreVersion();
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 0, updated: 0 });
      expect((await credibilities(name))[ip(1)]).toBe(50);
      expect((await scores(c))[ip(1)]).toBe(75);
      expect(await scoreVersion()).toBeGreaterThan(version);
    });

    it('csv with a credibility column the header lacks fails the run, as any named column does', async () => {
      const c = await fresh();
      feed.list('/nocol.csv', `ioc\n${ip(1)}\n`);
      const name = await source({ collection: c, kind: 'csv', url: feed.url('/nocol.csv'), valueColumn: 'ioc', credibilityField: 'cred' });
      expect(await run(name)).toMatchObject({ outcome: 'failed', error: { code: 'MissingColumn' } });
    });

    it("ndjson: each line's member in percent (counted as is); out of 0..100 or not a whole number: the source's", async () => {
      const c = await fresh();
      const lines = [{ ip: ip(1), conf: 80 }, { ip: ip(2), conf: '20' }, { ip: ip(3), conf: 150 }, { ip: ip(4), conf: 12.5 }, { ip: ip(5) }];
      feed.list('/cred.ndjson', lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
      const name = await source({
        collection: c,
        kind: 'ndjson',
        url: feed.url('/cred.ndjson'),
        valueField: 'ip',
        credibilityField: 'conf',
        credibilityScale: 'percent',
        reliability: 'B',
        credibility: 4,
      });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 5 });
      expect(await credibilities(name)).toEqual({ [ip(1)]: 80, [ip(2)]: 20, [ip(3)]: null, [ip(4)]: null, [ip(5)]: null });
      // B 75: (75 + 80) / 2 = 77.5 → 78; (75 + 20) / 2 = 47.5 → 48; with the source's 4 (25): 50.
      expect(await scores(c)).toEqual({ [ip(1)]: 78, [ip(2)]: 48, [ip(3)]: 50, [ip(4)]: 50, [ip(5)]: 50 });
    });

    it("taxii21: an indicator's confidence is its credibility in percent; without one (or out of range), the source's", async () => {
      const c = await fresh();
      const indicator = (n: number, confidence?: unknown) => ({
        type: 'indicator',
        spec_version: '2.1',
        id: `indicator--${randomUUID()}`,
        created: '2026-01-01T00:00:00.000Z',
        modified: '2026-01-01T00:00:00.000Z',
        pattern_type: 'stix',
        pattern: `[ipv4-addr:value = '${ip(n)}']`,
        valid_from: '2026-01-01T00:00:00.000Z',
        ...(confidence !== undefined && { confidence }),
      });
      feed.routes.set('/taxii/api/collections/scored/objects/', {
        body: JSON.stringify({ objects: [indicator(1, 40), indicator(2, 100), indicator(3), indicator(4, 101), indicator(5, '90')], more: false }),
        headers: { 'content-type': 'application/taxii+json;version=2.1', 'x-taxii-date-added-last': '2026-01-01T00:00:00.000001Z' },
      });
      const name = await source({ collection: c, kind: 'taxii21', url: feed.url('/taxii/api/'), collectionID: 'scored', reliability: 'A' });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 5 });
      expect(await credibilities(name)).toEqual({ [ip(1)]: 40, [ip(2)]: 100, [ip(3)]: null, [ip(4)]: null, [ip(5)]: null });
      expect(await scores(c)).toEqual({ [ip(1)]: 70, [ip(2)]: 100, [ip(3)]: 75, [ip(4)]: 75, [ip(5)]: 75 });
    });

    it("misp: an attribute's admiralty-scale:information-credibility tag, else its event's, else the source's", async () => {
      const c = await fresh();
      const tags = (...names: string[]) => names.map((tagName) => ({ name: tagName }));
      const attribute = (n: number, extra: Record<string, unknown> = {}) => ({ uuid: randomUUID(), type: 'ip-dst', value: ip(n), to_ids: true, ...extra });
      const events = [
        {
          Event: {
            uuid: randomUUID(),
            timestamp: '1',
            Tag: tags('tlp:green', 'admiralty-scale:information-credibility="2"'),
            Attribute: [attribute(1), attribute(2, { Tag: tags('admiralty-scale:information-credibility="1"') })],
            Object: [{ name: 'domain-ip', Attribute: [attribute(3, { Tag: tags('admiralty-scale:information-credibility="5"') })] }],
          },
        },
        { Event: { uuid: randomUUID(), timestamp: '1', Attribute: [attribute(4), attribute(5, { Tag: tags('admiralty-scale:source-reliability="a"') })] } },
      ];
      feed.routes.set('/scored-misp/manifest.json', {
        body: JSON.stringify(Object.fromEntries(events.map((event) => [event.Event.uuid, { timestamp: '1' }]))),
        headers: JSON_TYPE,
      });
      for (const event of events) feed.routes.set(`/scored-misp/${event.Event.uuid}.json`, { body: JSON.stringify(event), headers: JSON_TYPE });
      const name = await source({ collection: c, kind: 'misp', url: feed.url('/scored-misp/'), reliability: 'B', credibility: 3 });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 5 });
      expect(await credibilities(name)).toEqual({ [ip(1)]: 75, [ip(2)]: 100, [ip(3)]: 0, [ip(4)]: null, [ip(5)]: null });
      // B 75 with 2 75 → 75; with 1 100 → 88 (87.5); with 5 0 → 38 (37.5); with the source's 3 (50) → 63 (62.5).
      expect(await scores(c)).toEqual({ [ip(1)]: 75, [ip(2)]: 88, [ip(3)]: 38, [ip(4)]: 63, [ip(5)]: 63 });
    });
  });

  describe('the anchor', () => {
    /** Dates the source's last success and its claims back 30 days: IPAddress objects decay over 60 days by default. */
    const age = async (name: string) => {
      await t.db.query(`UPDATE sources_source SET last_success_at = now() - interval '30 days' WHERE name = $1`, [name]);
      await t.db.query(
        `UPDATE sources_claim SET last_seen_at = now() - interval '30 days', first_seen_at = now() - interval '30 days'
          WHERE source_id = (SELECT id FROM sources_source WHERE name = $1)`,
        [name],
      );
      await t.db.query(`UPDATE intel_object SET added_at = now() - interval '30 days' WHERE keys->0->>'value' = ANY($1::text[])`, [[ip(1), ip(2)]]);
    };
    const lastSuccess = async (name: string) =>
      (await t.db.query(`SELECT last_success_at AS at FROM sources_source WHERE name = $1`, [name])).rows[0].at as Date;

    it('a notModified run (304) and an unchanged run (the same body) each move the anchor of the claims they list', async () => {
      const c = await fresh();
      feed.list('/anchor.txt', ips(1, 2), '"v1"');
      const name = await text(c, '/anchor.txt', { reliability: 'A', credibility: 1 });
      expect(await run(name)).toMatchObject({ outcome: 'ok', added: 2 });
      expect(await scores(c)).toEqual({ [ip(1)]: 100, [ip(2)]: 100 });

      await age(name);
      // 30 of 60 days at speed 2: 100 × (1 − 0.5^(1/2)) = 29.3 → 29.
      expect(await scores(c, 'now()')).toEqual({ [ip(1)]: 29, [ip(2)]: 29 });
      let version = await scoreVersion();
      expect(await run(name)).toMatchObject({ outcome: 'notModified' });
      expect(Date.now() - (await lastSuccess(name)).getTime()).toBeLessThan(60_000);
      expect(await scores(c, 'now()')).toEqual({ [ip(1)]: 100, [ip(2)]: 100 });
      expect(await scores(c, `now() + interval '30 days'`)).toEqual({ [ip(1)]: 29, [ip(2)]: 29 });
      expect(await scoreVersion()).toBeGreaterThan(version);

      // The same body again, without validators this time: unchanged, anchored anew.
      feed.list('/anchor.txt', ips(2, 1));
      await age(name);
      version = await scoreVersion();
      expect(await run(name)).toMatchObject({ outcome: 'unchanged' });
      expect(await scores(c, 'now()')).toEqual({ [ip(1)]: 100, [ip(2)]: 100 });
      expect(await scoreVersion()).toBeGreaterThan(version);
    });
  });
});
