import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse as parseCsv } from 'csv-parse/sync';
import { BUILTIN_RESOURCES } from '../../src/common/guard/access.js';
import { TLP_LEVELS, TLP2_MARKING_IDS, type TlpRank } from '../../src/common/markings/tlp.js';
import { ROOT, taxiiClient } from '../support/clients/taxii.js';
import { eventually } from '../support/eventually.js';
import { parseLinks } from '../support/factories.js';
import { TLP1_REFS } from '../support/markings.js';
import { closeInstances, createInstances, type TestApp } from '../support/test-app.js';
import { createCollection } from '../taxii/taxii-support.js';

/**
 * The leak oracle (extensions §19): objects of random markings written through every write path (single
 * adds, batches and imports through both instances, a TAXII envelope, sources of every kind: text, csv and ndjson
 * lists, a MISP feed, and taxii21 reading another collection of this service through TAXII), a key of each ceiling, and
 * every read endpoint on both instances. Each endpoint must show a key exactly the objects marked at or
 * below its ceiling (none above, none missing, each with its marking), and again after markings change
 * (native re-writes lowering and raising them, a source's marking raised, its upstream's refs changed).
 * The oracle's own model is the rule: an object's marking is the most restrictive of its claims (the latest
 * native write's, each source's), a source's claim its `tlp` raised by what the record carries.
 *
 * Random with a seed (ORACLE_SEED to replay one): a failure lists, per key and endpoint, what leaked and
 * what went missing, with the seed.
 */

const SEED = Number(process.env.ORACLE_SEED ?? Date.now() % 2 ** 31);
/** mulberry32: a small seeded generator, so a failing draw can be replayed. */
function generator(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
}
const random = generator(SEED);
const rankDraw = (): TlpRank => Math.floor(random() * 5) as TlpRank;
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

const TLP1: Partial<Record<TlpRank, string>> = { 0: TLP1_REFS.WHITE, 1: TLP1_REFS.GREEN, 2: TLP1_REFS.AMBER, 4: TLP1_REFS.RED };
/** A marking definition that is no TLP: ignored on input. */
const OTHER_MARKING = 'marking-definition--f88d31f6-0000-4000-8000-000000000001';
const MISP_TAGS = ['tlp:clear', 'tlp:green', 'tlp:amber', 'tlp:amber+strict', 'tlp:red'];

const [NATIVE, SOURCED, UPSTREAM] = ['oracle', 'oracle-src', 'oracle-up'];

type KeyType = 'DomainName' | 'IPAddress';
interface Held {
  collection: string;
  type: KeyType;
  value: string;
  /** The api claim's marking (the latest native write's); undefined without one. */
  api?: TlpRank;
  /** Each source's claim. */
  sources: Map<string, TlpRank>;
}
const markingOf = (held: Held): TlpRank => Math.max(held.api ?? 0, ...held.sources.values()) as TlpRank;
/** Held while any claim holds it (an object whose last source claim ended is withdrawn). */
const alive = (held: Held) => held.api !== undefined || held.sources.size > 0;
const idOf = (collection: string, type: string, value: string) => `${collection}|${type}|${value}`;

describe('the leak oracle: no key reads above its ceiling, on any endpoint, on either instance', () => {
  let a: TestApp;
  let b: TestApp;
  const model = new Map<string, Held>();
  const keys: { ceiling: TlpRank; key: string; feedCursors: Map<string, string> }[] = [];
  const taxiiIds = new Map<string, string>();
  let counter = 0;
  /** A fresh value of `type` no other object of the oracle holds (fixed width: no value is a substring of another). */
  const nextValue = (type: KeyType) => {
    const n = ++counter;
    return type === 'IPAddress' ? `198.51.${100 + Math.floor(n / 150)}.${100 + (n % 150)}` : `o${String(n).padStart(4, '0')}.oracle-markings.net`;
  };
  const hold = (collection: string, type: KeyType, value: string) => {
    const id = idOf(collection, type, value);
    if (!model.has(id)) model.set(id, { collection, type, value, sources: new Map() });
    return model.get(id)!;
  };
  const form = (type: KeyType, value: string) => ({ type, keys: [{ type, value }], context: { seed: SEED } });
  const app = (n: number) => (n % 2 === 0 ? a : b);
  const spell = (rank: TlpRank) => TLP_LEVELS[rank];

  // --- writes -------------------------------------------------------------------------------------------

  async function single(n: number, type: KeyType, rank: TlpRank | undefined, defaultRank: TlpRank): Promise<void> {
    const value = nextValue(type);
    const query = rank === undefined ? '' : `?tlp=${encodeURIComponent(spell(rank).toLowerCase())}`;
    const response = await app(n).http().post(`/intel/collections/${NATIVE}/objects${query}`).set('X-Api-Key', a.adminKey).send(form(type, value));
    expect(response.status).toBe(204);
    hold(NATIVE, type, value).api = rank ?? defaultRank;
  }

  async function batch(n: number, entries: { type: KeyType; value: string }[], rank: TlpRank): Promise<void> {
    const response = await app(n)
      .http()
      .post(`/intel/collections/${NATIVE}/objects/batch?tlp=${encodeURIComponent(spell(rank))}`)
      .set('X-Api-Key', a.adminKey)
      .send(entries.map(({ type, value }) => form(type, value)));
    expect(response.status).toBe(200);
    for (const { type, value } of entries) hold(NATIVE, type, value).api = rank;
  }

  async function importText(n: number, rank: TlpRank): Promise<void> {
    const values = Array.from({ length: 5 }, () => nextValue('DomainName'));
    const response = await app(n)
      .http()
      .post(`/intel/collections/${NATIVE}/import?format=text&tlp=${encodeURIComponent(spell(rank))}`)
      .set('X-Api-Key', a.adminKey)
      .set('Content-Type', 'text/plain')
      .send(`Seen today: ${values.join(', ')} (report ${SEED}).`);
    expect(response.status).toBe(200);
    for (const value of values) hold(NATIVE, 'DomainName', value).api = rank;
  }

  /** A TAXII envelope: each indicator with TLP 1.0 or 2.0 refs (several, a non-TLP one, or none: the collection's default). */
  async function taxiiEnvelope(defaultRank: TlpRank): Promise<void> {
    const objects: object[] = [{ type: 'marking-definition', spec_version: '2.1', id: OTHER_MARKING, created: '2020-01-01T00:00:00.000Z', name: 'ignored' }];
    for (let i = 0; i < 20; i++) {
      const value = nextValue('DomainName');
      const ranks = Array.from({ length: Math.floor(random() * 3) }, rankDraw);
      const refs = ranks.map((rank) => (TLP1[rank] !== undefined && random() < 0.5 ? TLP1[rank]! : TLP2_MARKING_IDS[rank]));
      if (random() < 0.3) refs.push(OTHER_MARKING);
      objects.push({
        type: 'indicator',
        spec_version: '2.1',
        id: `indicator--${crypto.randomUUID()}`,
        created: '2026-01-01T00:00:00.000Z',
        modified: '2026-01-01T00:00:00.000Z',
        pattern: `[domain-name:value = '${value}']`,
        pattern_type: 'stix',
        valid_from: '2026-01-01T00:00:00.000Z',
        ...(refs.length > 0 && { object_marking_refs: refs }),
      });
      hold(NATIVE, 'DomainName', value).api = ranks.length > 0 ? (Math.max(...ranks) as TlpRank) : defaultRank;
    }
    const posted = await taxiiClient(b, b.adminKey).post(`${ROOT}/collections/${taxiiIds.get(NATIVE)}/objects/`, { objects });
    expect(posted.status).toBe(202);
    expect(posted.body).toMatchObject({ status: 'complete', failure_count: 0 });
  }

  // --- sources ------------------------------------------------------------------------------------------

  let feedServer: Server;
  let feedFolder: string;
  let feedBase: string;
  /** The list kinds, each its own file and form: its claims take the source's `tlp` alone. */
  const listSources = [
    { name: 'oracle-text', file: 'list.txt', form: { kind: 'text' }, body: (values: string[]) => values.join('\n') + '\n' },
    {
      name: 'oracle-csv',
      file: 'list.csv',
      form: { kind: 'csv', valueColumn: 'ioc', contextColumns: ['note'] },
      body: (values: string[]) => ['ioc,note', ...values.map((value) => `${value},"seen, twice"`)].join('\r\n') + '\r\n',
    },
    {
      name: 'oracle-ndjson',
      file: 'list.ndjson',
      form: { kind: 'ndjson', valueField: 'ioc' },
      body: (values: string[]) => values.map((ioc) => JSON.stringify({ ioc, seed: SEED })).join('\n') + '\n',
    },
  ].map((source) => ({ ...source, rank: 0 as TlpRank, values: [] as string[] }));
  const mispSource = { name: 'oracle-misp', rank: 0 as TlpRank };
  const taxiiSource = { name: 'oracle-taxii', rank: 0 as TlpRank };

  async function runSource(name: string): Promise<void> {
    const started = await a.sources.start(name);
    expect(started.status).toBe(202);
    const { runID } = started.body as { runID: string };
    const run = await eventually(async () => {
      const log = (await a.sources.runs(name)).body as { runID: string; finishedAt?: string; outcome: string }[];
      const found = log.find((entry) => entry.runID === runID);
      return found?.finishedAt ? found : false;
    });
    expect(run.outcome).toMatch(/^(ok|unchanged|notModified)$/);
  }

  /** Marks each held object of `collection` the run lists with the source's claim, and drops the claims it no longer lists. */
  function claim(source: string, listed: Map<string, TlpRank>): void {
    for (const held of model.values()) if (held.collection === SOURCED && !listed.has(held.value)) held.sources.delete(source);
    for (const [value, rank] of listed) hold(SOURCED, value.endsWith('.oracle-markings.net') ? 'DomainName' : 'IPAddress', value).sources.set(source, rank);
  }

  async function publishList(source: (typeof listSources)[number]): Promise<void> {
    await writeFile(join(feedFolder, source.file), source.body(source.values));
    claim(source.name, new Map(source.values.map((value) => [value, source.rank])));
  }

  const mispEvents = new Map<string, { tags: string[]; attributes: { value: string; tags: string[] }[] }>();
  async function publishMisp(): Promise<void> {
    const manifest: Record<string, unknown> = {};
    const listed = new Map<string, TlpRank>();
    for (const [uuid, event] of mispEvents) {
      manifest[uuid] = { timestamp: String(1700000000 + counter), info: uuid };
      const Attribute = event.attributes.map(({ value, tags }) => ({
        type: 'domain',
        value,
        to_ids: true,
        category: 'Network activity',
        Tag: tags.map((name) => ({ name })),
      }));
      await writeFile(join(feedFolder, `${uuid}.json`), JSON.stringify({ Event: { uuid, info: uuid, Tag: event.tags.map((name) => ({ name })), Attribute } }));
      const eventRank = Math.max(0, ...event.tags.map((tag) => MISP_TAGS.indexOf(tag.toLowerCase())));
      for (const { value, tags } of event.attributes) {
        listed.set(value, Math.max(mispSource.rank, eventRank, ...tags.map((tag) => MISP_TAGS.indexOf(tag))) as TlpRank);
      }
    }
    await writeFile(join(feedFolder, 'manifest.json'), JSON.stringify(manifest));
    claim(mispSource.name, listed);
  }

  /** The upstream's objects as the taxii21 source will read them: each upstream object's marking raises the source's. */
  function claimUpstream(): void {
    const listed = new Map<string, TlpRank>();
    for (const held of model.values()) if (held.collection === UPSTREAM) listed.set(held.value, Math.max(taxiiSource.rank, markingOf(held)) as TlpRank);
    // The taxii21 source's claims sit beside the other sources' in the same collection.
    for (const held of model.values()) if (held.collection === SOURCED && !listed.has(held.value)) held.sources.delete(taxiiSource.name);
    for (const [value, rank] of listed)
      hold(SOURCED, value.endsWith('.oracle-markings.net') ? 'DomainName' : 'IPAddress', value).sources.set(taxiiSource.name, rank);
  }

  beforeAll(async () => {
    [a, b] = await createInstances(2, { SOURCE_POLL_SECONDS: '3600' });
    for (const name of [NATIVE, SOURCED, UPSTREAM]) taxiiIds.set(name, await createCollection(a, name));
    feedFolder = await mkdtemp(join(tmpdir(), 'oracle-feed-'));
    feedServer = createServer((request, response) => {
      readFile(join(feedFolder, basename((request.url ?? '/').split('?')[0]))).then(
        (body) => void response.writeHead(200, { 'content-type': 'application/json' }).end(body),
        () => void response.writeHead(404).end('not found'),
      );
    });
    await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
    feedBase = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/`;
    // A key of each ceiling, reading every collection; its feed cursors taken before anything is written.
    for (const ceiling of [0, 1, 2, 3, 4] as TlpRank[]) {
      const created = await a
        .http()
        .post('/auth/keys')
        .set('X-Api-Key', a.adminKey)
        .send({ permissions: [{ resource: { id: BUILTIN_RESOURCES.intel.id }, actions: ['ReadChildren'] }], maxTLP: spell(ceiling) });
      expect(created.status).toBe(201);
      expect((await a.http().get(`/auth/keys/${created.body.id}`).set('X-Api-Key', a.adminKey)).body.maxTLP).toBe(spell(ceiling));
      const feedCursors = new Map<string, string>();
      for (const collection of [NATIVE, SOURCED, UPSTREAM]) {
        const first = await a.http().get(`/intel/collections/${collection}/objects?limit=1`).set('X-Api-Key', created.body.key);
        feedCursors.set(collection, new URL(parseLinks(first.headers.link as string).related, 'http://x').searchParams.get('cursor')!);
      }
      keys.push({ ceiling, key: created.body.key as string, feedCursors });
    }
  });
  afterAll(async () => {
    await closeInstances([a, b]);
    feedServer?.closeAllConnections();
    await new Promise<void>((resolve) => (feedServer ? feedServer.close(() => resolve()) : resolve()));
    if (feedFolder) await rm(feedFolder, { recursive: true, force: true });
  });

  // --- reads --------------------------------------------------------------------------------------------

  type Seen = Map<string, string | undefined>;
  const found: string[] = [];
  const counts = { objects: 0, keys: 0, endpoints: new Set<string>(), checks: 0 };

  async function walk(t: TestApp, key: string, path: string): Promise<object[]> {
    const items: object[] = [];
    for (let next: string | undefined = path; next !== undefined;) {
      const response: { status: number; body: unknown; headers: Record<string, string> } = await t.http().get(next).set('X-Api-Key', key);
      expect(response.status).toBe(200);
      items.push(...(response.body as object[]));
      next = parseLinks(response.headers.link as string | undefined).next;
    }
    return items;
  }

  const viewed = (collection: string, objects: object[]): Seen =>
    new Map(
      (objects as { keys: { type: string; value: string }[]; tlp?: string }[]).map((object) => [
        idOf(collection, object.keys[0].type, object.keys[0].value),
        object.tlp,
      ]),
    );

  /** The endpoints, each answering what a key sees: object ids with the marking shown (undefined where the answer shows none). */
  const endpoints: Record<string, (t: TestApp, key: string, k: (typeof keys)[number]) => Promise<Seen>> = {
    listing: async (t, key) => {
      const seen: Seen = new Map();
      for (const collection of [NATIVE, SOURCED, UPSTREAM]) {
        for (const [id, tlp] of viewed(collection, await walk(t, key, `/intel/collections/${collection}/objects?limit=37`))) seen.set(id, tlp);
      }
      return seen;
    },
    network: async (t, key) => {
      const seen: Seen = new Map();
      for (const collection of [NATIVE, SOURCED, UPSTREAM]) {
        for (const [id, tlp] of viewed(collection, await walk(t, key, `/intel/collections/${collection}/objects/network?within=198.51.0.0/16&limit=29`)))
          seen.set(id, tlp);
      }
      return seen;
    },
    lookup: async (t, key) => {
      const seen: Seen = new Map();
      const all = [...new Map([...model.values()].map((held) => [`${held.type}|${held.value}`, { type: held.type, value: held.value }])).values()];
      for (let at = 0; at < all.length; at += 400) {
        const response = await t
          .http()
          .post('/intel/lookup')
          .set('X-Api-Key', key)
          .send({ keys: all.slice(at, at + 400) });
        expect(response.status).toBe(200);
        for (const result of response.body as { key: { type: string; value: string }; matches: { collection: string; object: { tlp: string } }[] }[]) {
          for (const match of result.matches) seen.set(idOf(match.collection, result.key.type, result.key.value), match.object.tlp);
        }
      }
      return seen;
    },
    feed: async (t, key, k) => {
      const seen: Seen = new Map();
      for (const collection of [NATIVE, SOURCED, UPSTREAM]) {
        const held = new Map<string, string | undefined>();
        let cursor = k.feedCursors.get(collection)!;
        for (;;) {
          const response = await t.http().get(`/intel/collections/${collection}/objects/changes?cursor=${cursor}&limit=31`).set('X-Api-Key', key);
          expect(response.status).toBe(200);
          for (const change of response.body as { operation: string; object: { keys: { type: string; value: string }[]; tlp: string } }[]) {
            const id = idOf(collection, change.object.keys[0].type, change.object.keys[0].value);
            if (change.operation === 'Remove') held.delete(id);
            else held.set(id, change.object.tlp);
          }
          const next = parseLinks(response.headers.link as string | undefined).next;
          if (next === undefined) break;
          cursor = new URL(next, 'http://x').searchParams.get('cursor')!;
        }
        for (const [id, tlp] of held) seen.set(id, tlp);
      }
      return seen;
    },
    ...Object.fromEntries(
      (['ndjson', 'csv', 'txt', 'stix'] as const).map((format) => [
        `export ${format}`,
        async (t: TestApp, key: string) => {
          const seen: Seen = new Map();
          for (const collection of [NATIVE, SOURCED, UPSTREAM]) {
            for (const type of format === 'txt' ? (['DomainName', 'IPAddress'] as const) : [undefined]) {
              const query = `format=${format}&warninglists=ignore${type ? `&keyType=${type}` : ''}`;
              const response = await t.http().get(`/intel/collections/${collection}/export?${query}`).set('X-Api-Key', key).buffer(true);
              expect(response.status).toBe(200);
              const body = response.text;
              const shown = new Map<string, string | undefined>();
              if (format === 'ndjson')
                for (const [id, tlp] of viewed(
                  collection,
                  body
                    .split('\n')
                    .filter(Boolean)
                    .map((line) => JSON.parse(line)),
                ))
                  shown.set(id, tlp);
              if (format === 'txt') for (const value of body.split('\n').filter(Boolean)) shown.set(idOf(collection, type!, value), undefined);
              if (format === 'csv') {
                for (const row of parseCsv(body, { columns: true }) as Record<string, string>[])
                  shown.set(idOf(collection, row['key type'], row['key value']), row.tlp);
              }
              if (format === 'stix') {
                for (const object of (JSON.parse(body) as { objects: { type: string; pattern?: string; object_marking_refs?: string[] }[] }).objects) {
                  if (object.type !== 'indicator') continue;
                  const [, stixType, value] = /^\[(domain-name|ipv4-addr):value = '([^']+)'\]$/.exec(object.pattern!)!;
                  const rank = TLP2_MARKING_IDS.indexOf(object.object_marking_refs?.[0] ?? '');
                  shown.set(idOf(collection, stixType === 'ipv4-addr' ? 'IPAddress' : 'DomainName', value), rank < 0 ? 'none' : spell(rank as TlpRank));
                }
              }
              // X-TLP-Max: the most restrictive marking in the body, CLEAR when empty.
              const most = Math.max(
                0,
                ...[...shown.keys()].map((id) => markingOf(model.get(id) ?? { collection, type: 'DomainName', value: '', sources: new Map() })),
              );
              expect({ id: `${collection} ${query}`, max: response.headers['x-tlp-max'] }).toEqual({
                id: `${collection} ${query}`,
                max: spell(most as TlpRank),
              });
              for (const [id, tlp] of shown) seen.set(id, tlp);
            }
          }
          return seen;
        },
      ]),
    ),
    'taxii objects': async (t, key) => {
      const seen: Seen = new Map();
      const client = taxiiClient(t, key);
      for (const collection of [NATIVE, SOURCED, UPSTREAM]) {
        let manifestCount = 0;
        for (const kind of ['objects', 'manifest'] as const) {
          for (let next: string | undefined = ''; next !== undefined;) {
            const response = await client.get(`${ROOT}/collections/${taxiiIds.get(collection)}/${kind}/?limit=23${next ? `&next=${next}` : ''}`);
            expect(response.status).toBe(200);
            const body = response.body as { objects?: { type: string; pattern?: string; object_marking_refs?: string[] }[]; more?: boolean; next?: string };
            if (kind === 'manifest')
              manifestCount += (body.objects ?? []).filter((entry) => (entry as unknown as { id: string }).id.startsWith('indicator--')).length;
            for (const object of kind === 'objects' ? (body.objects ?? []) : []) {
              if (object.type !== 'indicator') continue;
              const [, stixType, value] = /^\[(domain-name|ipv4-addr):value = '([^']+)'\]$/.exec(object.pattern!)!;
              const rank = TLP2_MARKING_IDS.indexOf(object.object_marking_refs?.[0] ?? '');
              seen.set(idOf(collection, stixType === 'ipv4-addr' ? 'IPAddress' : 'DomainName', value), rank < 0 ? 'none' : spell(rank as TlpRank));
            }
            next = body.more ? body.next : undefined;
          }
        }
        // The manifest lists exactly the indicators the objects did.
        expect({ collection, manifestCount }).toEqual({ collection, manifestCount: [...seen.keys()].filter((id) => id.startsWith(`${collection}|`)).length });
      }
      return seen;
    },
    'history, provenance, score, sightings': async (t, key) => {
      // Per object: history has entries, and provenance and the score's explanation answer 200, exactly when the object is visible.
      const seen: Seen = new Map();
      for (const held of model.values()) {
        const query = `objectKeyType=${held.type}&objectKey=${encodeURIComponent(held.value)}`;
        const [history, provenance, score] = await Promise.all([
          t.http().get(`/intel/collections/${held.collection}/objects/history?${query}`).set('X-Api-Key', key),
          t.http().get(`/intel/collections/${held.collection}/objects/provenance?${query}`).set('X-Api-Key', key),
          t.http().get(`/intel/collections/${held.collection}/objects/score?${query}`).set('X-Api-Key', key),
        ]);
        expect(history.status).toBe(200);
        expect([200, 404]).toContain(provenance.status);
        expect([200, 404]).toContain(score.status);
        const inHistory = (history.body as unknown[]).length > 0;
        const inProvenance = provenance.status === 200;
        const inScore = score.status === 200;
        if (inHistory !== inProvenance || inHistory !== inScore) {
          found.push(`seed ${SEED}: ${held.collection} ${held.value}: history ${inHistory}, provenance ${inProvenance}, score ${inScore}`);
        }
        if (inHistory) seen.set(idOf(held.collection, held.type, held.value), undefined);
      }
      // Sightings: Unknown exactly for the keys no visible object holds in any collection.
      const distinct = [...new Map([...model.values()].map((held) => [`${held.type}|${held.value}`, held])).values()];
      const recorded = await t
        .http()
        .post('/intel/sightings')
        .set('X-Api-Key', key)
        .send(distinct.map((held) => ({ type: held.type, value: held.value })));
      expect(recorded.status).toBe(200);
      (recorded.body as { status: string }[]).forEach(({ status }, i) => {
        const visibleSomewhere = [...model.values()].some((held) => held.value === distinct[i].value && alive(held) && markingOf(held) <= ceilingOfKey(key));
        if ((status === 'Unknown') === visibleSomewhere)
          found.push(`seed ${SEED}: sighting of ${distinct[i].value} by a ${spell(ceilingOfKey(key))} key: ${status}`);
      });
      return seen;
    },
  };
  const ceilingOfKey = (key: string) => keys.find((k) => k.key === key)!.ceiling;

  /** Every endpoint, for every key, alternating the instances; records what leaked, went missing or shows another marking. */
  async function check(phase: string, flip: number): Promise<void> {
    for (const [index, k] of keys.entries()) {
      const expected = new Map([...model.entries()].filter(([, held]) => alive(held) && markingOf(held) <= k.ceiling));
      for (const [endpoint, read] of Object.entries(endpoints)) {
        const t = app(index + flip);
        const seen = await read(t, k.key, k);
        const relevant = (id: string) => endpoint !== 'network' || model.get(id)?.type === 'IPAddress';
        const leaked = [...seen.keys()].filter((id) => !expected.has(id));
        const missing = [...expected.keys()].filter((id) => relevant(id) && !seen.has(id));
        const misMarked = [...seen.entries()].filter(([id, tlp]) => tlp !== undefined && expected.has(id) && tlp !== spell(markingOf(expected.get(id)!)));
        for (const id of leaked)
          found.push(
            `seed ${SEED} ${phase}: ${endpoint} on ${t === a ? 'A' : 'B'} leaked ${id} (${spell(markingOf(model.get(id)!))}) to a ${spell(k.ceiling)} key`,
          );
        for (const id of missing) found.push(`seed ${SEED} ${phase}: ${endpoint} on ${t === a ? 'A' : 'B'} missed ${id} for a ${spell(k.ceiling)} key`);
        for (const [id, tlp] of misMarked) found.push(`seed ${SEED} ${phase}: ${endpoint} showed ${id} as ${tlp}, not ${spell(markingOf(model.get(id)!))}`);
        counts.endpoints.add(endpoint);
        counts.checks += model.size;
      }
    }
    counts.objects = Math.max(counts.objects, model.size);
    counts.keys = keys.length;
  }

  it('phase 1: every write path, random markings; every key reads exactly what its ceiling allows on every endpoint', async () => {
    const defaultRank = rankDraw();
    const tag = (await a.intel.collection(NATIVE)).headers.etag as string;
    expect((await a.intel.updateCollection(NATIVE, { defaultTLP: spell(defaultRank) }, tag)).status).toBeLessThan(300);
    for (let n = 0; n < 30; n++) await single(n, n % 3 === 0 ? 'IPAddress' : 'DomainName', random() < 0.2 ? undefined : rankDraw(), defaultRank);
    for (let n = 0; n < 5; n++) {
      await batch(
        n,
        Array.from({ length: 6 }, (_, i) => {
          const type: KeyType = i % 2 === 0 ? 'IPAddress' : 'DomainName';
          return { type, value: nextValue(type) };
        }),
        rankDraw(),
      );
    }
    for (let n = 0; n < 4; n++) await importText(n, rankDraw());
    await taxiiEnvelope(defaultRank);

    // The upstream collection: native writes the taxii21 source will read through instance B's TAXII.
    for (let n = 0; n < 12; n++) {
      const type: KeyType = n % 2 === 0 ? 'IPAddress' : 'DomainName';
      const value = nextValue(type);
      const rank = rankDraw();
      const response = await app(n)
        .http()
        .post(`/intel/collections/${UPSTREAM}/objects?tlp=${encodeURIComponent(spell(rank))}`)
        .set('X-Api-Key', a.adminKey)
        .send(form(type, value));
      expect(response.status).toBe(204);
      hold(UPSTREAM, type, value).api = rank;
    }

    // Sources into one collection: lists of each kind, a MISP feed (tags on events and attributes), the upstream over TAXII.
    for (const source of listSources) {
      source.rank = rankDraw();
      source.values = Array.from({ length: 10 }, (_, i) => nextValue(i % 3 === 0 ? 'IPAddress' : 'DomainName'));
      await publishList(source);
    }
    for (let e = 0; e < 3; e++) {
      const attributes = Array.from({ length: 5 }, () => ({ value: nextValue('DomainName'), tags: random() < 0.5 ? [pick(MISP_TAGS)] : [] }));
      mispEvents.set(`5f0cfd67-1b2c-4d3e-8f40-00000000000${e}`, { tags: random() < 0.6 ? [pick(MISP_TAGS).toUpperCase()] : [], attributes });
    }
    mispSource.rank = rankDraw();
    await publishMisp();
    taxiiSource.rank = rankDraw();
    claimUpstream();
    const sources = [
      ...listSources.map((source) => ({ name: source.name, ...source.form, url: `${feedBase}${source.file}`, tlp: spell(source.rank) })),
      { name: mispSource.name, kind: 'misp', url: feedBase, tlp: spell(mispSource.rank) },
      {
        name: taxiiSource.name,
        kind: 'taxii21',
        url: `${b.url}${ROOT}/`,
        collectionID: taxiiIds.get(UPSTREAM),
        basicAuth: { username: 'oracle', password: a.adminKey },
        tlp: spell(taxiiSource.rank),
      },
    ];
    for (const source of sources) {
      const created = await a.sources.create({ collection: SOURCED, intervalSeconds: 3600, maxRemovalRatio: 1, ...source });
      expect(created.status).toBe(201);
      await runSource(source.name);
    }

    await check('phase 1', 0);
    expect(found).toEqual([]);
  });

  it('phase 2: markings change (native re-writes, a source raised, upstream refs moved); still exact, and the feeds followed from the start agree', async () => {
    // Native re-writes of the same objects with another marking (the api claim takes the latest, lower or higher).
    const natives = [...model.values()].filter((held) => held.collection === NATIVE).slice(0, 24);
    for (const [n, held] of natives.entries()) {
      const rank = rankDraw();
      const response = await app(n + 1)
        .http()
        .post(`/intel/collections/${NATIVE}/objects?tlp=${encodeURIComponent(spell(rank))}`)
        .set('X-Api-Key', a.adminKey)
        .send(form(held.type, held.value));
      expect(response.status).toBe(204);
      held.api = rank;
    }
    // A native write onto objects a source claims: the most restrictive of both.
    for (const held of [...model.values()].filter((h) => h.collection === SOURCED).slice(0, 6)) {
      const rank = rankDraw();
      const response = await b
        .http()
        .post(`/intel/collections/${SOURCED}/objects?tlp=${encodeURIComponent(spell(rank))}`)
        .set('X-Api-Key', a.adminKey)
        .send(form(held.type, held.value));
      expect(response.status).toBe(204);
      held.api = rank;
    }
    // Each list source's marking moves; the upstream's objects are re-marked and read again.
    for (const source of listSources) {
      source.rank = rankDraw();
      const view = await a.sources.source(source.name);
      expect((await a.sources.update(source.name, { tlp: spell(source.rank) }, view.headers.etag as string)).status).toBe(204);
      await publishList(source);
      await runSource(source.name);
    }
    for (const [n, held] of [...model.values()].filter((h) => h.collection === UPSTREAM).entries()) {
      if (n % 2 === 1) continue;
      const rank = rankDraw();
      const response = await app(n)
        .http()
        .post(`/intel/collections/${UPSTREAM}/objects?tlp=${encodeURIComponent(spell(rank))}`)
        .set('X-Api-Key', a.adminKey)
        .send(form(held.type, held.value));
      expect(response.status).toBe(204);
      held.api = rank;
    }
    claimUpstream();
    await runSource(taxiiSource.name);

    await check('phase 2', 1);
    expect(found).toEqual([]);
    // What the closing note reports: objects × keys × endpoints, checked twice.
    process.stdout.write(
      `leak oracle (seed ${SEED}): ${counts.objects} objects × ${counts.keys} keys × ${counts.endpoints.size} endpoints, ${counts.checks} object checks, 2 instances\n`,
    );
  });
});
