import type autocannon from 'autocannon';
import { parseLinks } from '../lib/api.js';
import { httpLoad, stepLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { createCollection } from './intel-setup.js';
import { lookupLoad } from './lookup-setup.js';
import { benchObject } from './row3-object-add.js';
import { countLines, exportBody } from './row16-export.js';
import { numberSeeded, SEED_CONTEXT, seedObjects, seedTarget, settleTables } from './seed.js';

type Row = RowModule['rows'][number];

const LISTING: Row = {
  id: '25a',
  title: 'listing page (limit 1000) as a key with maxTLP TLP:GREEN, half the objects AMBER, vs an unrestricted key',
  unit: 'pages/s',
  target: { minRatio: 0.8 },
};
const FEED: Row = {
  id: '25b',
  title: 'change feed page (limit 1000) as the GREEN key, half the records AMBER, vs an unrestricted key',
  unit: 'pages/s',
  target: { minRatio: 0.8 },
};
const EXPORT: Row = {
  id: '25c',
  title: "row 16's export (txt of DomainName) as the GREEN key, half the objects AMBER, vs an unrestricted key",
  unit: 'exports/s',
  target: { minRatio: 0.8 },
};
const LOOKUP: Row = {
  id: '25d',
  title: 'lookup of 1,000 keys (half stored, half of those AMBER) as the GREEN key vs an unrestricted key',
  unit: 'lookups/s',
  target: { minRatio: 0.8 },
};

/** The rank of TLP:AMBER (src/common/markings/tlp.ts): the seeding's batch plan takes ranks. */
const TLP_AMBER = 2;

/** Every odd object is AMBER and says so in its key's value, so that every answer is checked by its text alone. */
const AMBER_MARK = '.amber.b25.example';
const CLEAR_MARK = '.clear.b25.example';
const markedValue = (g: number) => `m${g}${g % 2 === 1 ? AMBER_MARK : CLEAR_MARK}`;

/** How many times `marker` stands in `text` (rows 24 and 25 check every answer by the markers in its values). */
export function occurrences(text: string, marker: string): number {
  let count = 0;
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, at + marker.length)) count++;
  return count;
}

/** Counts `marker` in a body arriving in chunks, one split over two chunks included. */
function markerCounter(marker: string) {
  const needle = Buffer.from(marker);
  let tail: Buffer = Buffer.alloc(0);
  let count = 0;
  return {
    add(chunk: Buffer) {
      const data = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
      for (let at = data.indexOf(needle); at !== -1; at = data.indexOf(needle, at + needle.length)) count++;
      // Too short to hold a whole marker, so never counted twice.
      tail = data.subarray(Math.max(0, data.length - needle.length + 1));
    },
    get count() {
      return count;
    },
  };
}

/** A seeded collection, every odd object AMBER, and the two keys that read it. */
interface MarkedCollection {
  name: string;
  count: number;
  /** Objects (and their `Add` records) marked AMBER; the others are CLEAR. */
  amber: number;
  /** The changes cursor from before the seeding: reading from it yields every record. */
  startCursor: string;
  /** Bearer tokens of two keys with Read on the collection alone: maxTLP TLP:GREEN, and the default TLP:RED. */
  tokens: { green: string; unrestricted: string };
}

/** A key with Read on `resourceId`, its TLP ceiling `maxTLP` (the admin's own, TLP:RED, without it). */
async function readKey(ctx: RowContext, resourceId: number, maxTLP?: string): Promise<string> {
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: resourceId, actions: ['Read'] }], maxTLP });
  return ctx.admin.withKey(key).token();
}

/**
 * `count` DomainName objects seeded through the service's batch statement (seed.ts), every odd one marked AMBER
 * there as a batch with `tlp=TLP:AMBER` marks it (its api claim, and its `Add` record). Seeded once per run for `label`.
 */
async function markedCollection(ctx: RowContext, label: string, count: number, contextJson: (g: number) => string): Promise<MarkedCollection> {
  const cached = ctx.shared.get(`marked-${label}`) as MarkedCollection | undefined;
  if (cached) return cached;
  const collection = await createCollection(ctx, `marked-${label}`);
  const target = await seedTarget(ctx, collection.name);
  await seedObjects(ctx, target, 0, count, (g) => ({
    type: 'DomainName',
    key: { type: 'DomainName', value: markedValue(g) },
    contextJson: contextJson(g),
    tlp: g % 2 === 1 ? TLP_AMBER : undefined,
  }));
  await numberSeeded(ctx, target);
  await settleTables(ctx);
  const amber = Math.floor(count / 2);
  const tokens = { green: await readKey(ctx, collection.resourceId, 'TLP:GREEN'), unrestricted: await readKey(ctx, collection.resourceId) };
  const marked = { name: collection.name, count, amber, startCursor: target.startCursor, tokens };
  ctx.shared.set(`marked-${label}`, marked);
  return marked;
}

/** The collection rows 25a and 25b walk: rows 4 and 5's size and objects (1 KB contexts). */
const walkedCollection = (ctx: RowContext) =>
  markedCollection(ctx, 'walk', ctx.scale.feedItems, (g) => benchObject('b25', g, ctx.scale.contextBytes).contextJson);
/** The collection rows 25c and 25d read: row 16's size and small contexts. */
const exportedCollection = (ctx: RowContext) => markedCollection(ctx, 'export', ctx.scale.exportObjects, () => SEED_CONTEXT);

/** What a walk of one key found: its pages and the objects of each marking in them. */
interface Walk {
  pages: number;
  clear: number;
  amber: number;
}

/** A walk from `firstPath` following `Link: rel="next"` to the page without one, untimed: its pages and objects. */
async function walkOnce(ctx: RowContext, token: string, firstPath: string, maxPages: number): Promise<Walk> {
  const api = ctx.admin.withToken(token);
  const walk = { pages: 0, clear: 0, amber: 0 };
  for (let path: string | undefined = firstPath; path !== undefined;) {
    if (++walk.pages > maxPages) throw new Error(`a walk from ${firstPath} took more than ${maxPages} pages`);
    const page = await api.request('GET', path);
    walk.clear += occurrences(page.text, `${CLEAR_MARK}"`);
    walk.amber += occurrences(page.text, `${AMBER_MARK}"`);
    path = parseLinks(page.headers.get('link') ?? undefined).next;
  }
  return walk;
}

/**
 * Rows 25a and 25b: `scale.readers` readers each walk the whole listing or feed of the walked collection from
 * `firstPath` as the GREEN key, against the same walks as the unrestricted key. One untimed walk of each key
 * first finds its pages per walk and checks what it read: the GREEN key every CLEAR object and no AMBER one,
 * the unrestricted key every object. Every timed walk must take that many pages and read exactly that.
 */
function walkModule(
  row: Row,
  route: string,
  walkOf: (ctx: RowContext, marked: MarkedCollection) => { firstPath: string; label: string; noun: string },
): RowModule {
  return {
    rows: [row],
    requires: [route],
    async run(ctx) {
      const { scale } = ctx;
      const marked = await walkedCollection(ctx);
      const { firstPath, label, noun } = walkOf(ctx, marked);
      const maxPages = marked.count + 2;
      const clear = marked.count - marked.amber;
      const probes = {
        green: await walkOnce(ctx, marked.tokens.green, firstPath, maxPages),
        unrestricted: await walkOnce(ctx, marked.tokens.unrestricted, firstPath, maxPages),
      };
      if (probes.green.amber > 0) throw new Error(`the GREEN key read ${probes.green.amber} AMBER objects in a walk of the ${noun}`);
      if (probes.green.clear !== clear) throw new Error(`the GREEN key read ${probes.green.clear} CLEAR objects in a walk of the ${noun}, not ${clear}`);
      if (probes.unrestricted.clear !== clear || probes.unrestricted.amber !== marked.amber) {
        throw new Error(
          `the unrestricted key read ${probes.unrestricted.clear} CLEAR and ${probes.unrestricted.amber} AMBER objects in a walk, not ${clear} and ${marked.amber}`,
        );
      }

      let badWalks = 0;
      let leaked = 0;
      const walks = (side: 'green' | 'unrestricted') => {
        const { pages, amber } = probes[side];
        // One walk is one cycle of `pages` requests; autocannon keeps `context` for a whole cycle.
        const requests: autocannon.Request[] = Array.from({ length: pages }, (_, page) => ({
          method: 'GET',
          setupRequest: (request, context) => {
            if (page === 0) Object.assign(context, { clear: 0, amber: 0 });
            const path = page === 0 ? firstPath : (context.next as string | undefined);
            if (!path) badWalks++;
            return { ...request, path: path ?? firstPath };
          },
          onResponse: (status, body, context, headers) => {
            context.next = parseLinks(headers.link ?? headers.Link).next;
            const found = { clear: occurrences(body, `${CLEAR_MARK}"`), amber: occurrences(body, `${AMBER_MARK}"`) };
            if (side === 'green') leaked += found.amber;
            context.clear = (context.clear as number) + found.clear;
            context.amber = (context.amber as number) + found.amber;
            const last = page === pages - 1;
            if (status === 200 && (last === (context.next !== undefined) || (last && (context.clear !== clear || context.amber !== amber)))) badWalks++;
          },
        }));
        return (count: number) =>
          httpLoad({
            baseUrl: ctx.service.url,
            connections: scale.readers,
            amount: scale.readers * count * pages,
            headers: { Authorization: `Bearer ${marked.tokens[side]}` },
            requests,
            keepBodies: true,
          }).done;
      };
      const [green, unrestricted] = [walks('green'), walks('unrestricted')];
      const measured = await compare({
        rounds: scale.rounds,
        serviceLabel: `GREEN key: ${label} (${probes.green.pages} pages a walk)`,
        baselineLabel: `unrestricted key: ${label} (${probes.unrestricted.pages} pages a walk)`,
        warmService: () => green(1),
        warmBaseline: () => unrestricted(1),
        service: async () => ({ outcome: await green(scale.walks) }),
        baseline: async () => ({ outcome: await unrestricted(scale.walks) }),
        serviceProbe: ctx.service.server.probe,
        cpu: ctx.cpu,
        sql: ctx.sqlStats,
        bothSidesThroughService: true,
      });
      if (leaked > 0) throw new Error(`the GREEN key read ${leaked} AMBER objects in the ${noun}`);
      if (badWalks > 0) throw new Error(`${badWalks} walks took other pages than their key's first walk, or read other objects`);
      const walksPerSecond = (throughput: number, pages: number) => throughput / pages;
      const walkRatio =
        walksPerSecond(measured.service.throughput, probes.green.pages) / walksPerSecond(measured.baseline.throughput, probes.unrestricted.pages);
      return [
        finishRow(row, measured, [
          `${marked.count.toLocaleString('en-US')} objects (1 KB contexts), every other one AMBER; ${scale.readers} readers, each walking the whole ${noun} from its first page to its last ${scale.walks === 1 ? 'once' : `${scale.walks} times`} a round`,
          `a walk: the GREEN key ${probes.green.pages} pages (${clear.toLocaleString('en-US')} objects), the unrestricted key ${probes.unrestricted.pages} pages (${marked.count.toLocaleString('en-US')}); pages/s is the cost of one page request; whole walks per second, GREEN over unrestricted: ${walkRatio.toFixed(2)}`,
        ]),
      ];
    },
  };
}

/** Row 25a: the listing, `limit` 1000: the GREEN key's pages are full of CLEAR objects, so it reads about twice the rows per page. */
export const row25a = walkModule(LISTING, 'GET /intel/collections/{collection_id}/objects', (ctx, marked) => ({
  firstPath: `/intel/collections/${marked.name}/objects?limit=${ctx.scale.pageLimit}`,
  label: `GET …/objects (limit ${ctx.scale.pageLimit})`,
  noun: 'listing',
}));

/** Row 25b: the change feed from the cursor before the seeding, `limit` 1000 (extensions §19: the GREEN key's pages skip the AMBER records). */
export const row25b = walkModule(FEED, 'GET /intel/collections/{collection_id}/objects/changes', (ctx, marked) => ({
  firstPath: `/intel/collections/${marked.name}/objects/changes?cursor=${marked.startCursor}&limit=${ctx.scale.pageLimit}`,
  label: `GET …/objects/changes (limit ${ctx.scale.pageLimit})`,
  noun: 'feed',
}));

/**
 * Row 25c: `GET …/export?format=txt&keyType=DomainName` of the exported collection (`scale.exportObjects`),
 * one export at a time, as the GREEN key against the unrestricted key; every line counted and every AMBER
 * value found in it counted as it streams: the GREEN key's export lists the CLEAR half and nothing else.
 */
export const row25c: RowModule = {
  rows: [EXPORT],
  requires: ['GET /intel/collections/{collection_id}/export'],
  async run(ctx) {
    const { scale } = ctx;
    const marked = await exportedCollection(ctx);
    const url = `${ctx.service.url}/intel/collections/${marked.name}/export?format=txt&keyType=DomainName`;
    const clear = marked.count - marked.amber;
    const exports = (side: 'green' | 'unrestricted') => {
      const expected = side === 'green' ? { lines: clear, amber: 0 } : { lines: marked.count, amber: marked.amber };
      return () =>
        stepLoad({
          concurrency: 1,
          amount: 1,
          step: async () => {
            let lines = 0;
            const amber = markerCounter(AMBER_MARK);
            await exportBody(url, { Authorization: `Bearer ${marked.tokens[side]}` }, (chunk) => {
              lines += countLines(chunk);
              amber.add(chunk);
            });
            if (side === 'green' && amber.count > 0) throw new Error(`the GREEN key's export listed ${amber.count} AMBER objects`);
            if (lines !== expected.lines || amber.count !== expected.amber) {
              throw new Error(`the ${side} key's export listed ${lines} lines, ${amber.count} of them AMBER, not ${expected.lines} and ${expected.amber}`);
            }
          },
        });
    };
    const [green, unrestricted] = [exports('green'), exports('unrestricted')];
    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: `GREEN key: GET …/export?format=txt&keyType=DomainName (${clear.toLocaleString('en-US')} lines)`,
      baselineLabel: `unrestricted key: the same export (${marked.count.toLocaleString('en-US')} lines)`,
      warmService: green,
      warmBaseline: unrestricted,
      service: async () => ({ outcome: await green() }),
      baseline: async () => ({ outcome: await unrestricted() }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    return [
      finishRow(EXPORT, measured, [
        `${marked.count.toLocaleString('en-US')} DomainName objects, every other one AMBER, one export at a time, every line counted on both sides; exports/s is the cost of one export request`,
        `lines/s: GREEN key ${Math.round(measured.service.throughput * clear).toLocaleString('en-US')}, unrestricted key ${Math.round(measured.baseline.throughput * marked.count).toLocaleString('en-US')}`,
      ]),
    ];
  },
};

/**
 * Row 25d: `POST /intel/lookup` of `scale.lookupKeys` DomainName keys over the exported collection, half of
 * them stored (alternately CLEAR and AMBER objects, spread over the collection), half never stored, 2 clients,
 * as the GREEN key against the unrestricted key; every answer checked key by key: the GREEN key finds every
 * stored CLEAR key and nothing else, the unrestricted key every stored key.
 */
export const row25d: RowModule = {
  rows: [LOOKUP],
  requires: ['POST /intel/lookup'],
  async run(ctx) {
    const { scale } = ctx;
    const marked = await exportedCollection(ctx);
    const sets = 4;
    const stored = Math.ceil(scale.lookupKeys / 2);
    if (marked.count < sets * stored) throw new Error(`${sets * stored} stored keys are needed, the collection holds ${marked.count}`);
    // Stored key j of all sets: alternately an even (CLEAR) and an odd (AMBER) object, spread over the collection.
    const storedObject = (j: number) => 2 * Math.floor((j * marked.count) / (2 * sets * stored)) + (j % 2);
    const keySets = Array.from({ length: sets }, (_, s) =>
      Array.from({ length: scale.lookupKeys }, (_, i) => ({
        type: 'DomainName',
        value: i % 2 === 0 ? markedValue(storedObject(s * stored + i / 2)) : `absent${s * scale.lookupKeys + i}.b25.example`,
      })),
    );
    let wrong = 0;
    let leaked = 0;
    const lookups = (side: 'green' | 'unrestricted') =>
      lookupLoad(ctx, marked.tokens[side], keySets, (status, body) => {
        if (status !== 200) return;
        const results = JSON.parse(body) as { key: { value: string }; matches: { object: { tlp: string } }[] }[];
        if (results.length !== scale.lookupKeys) wrong++;
        for (const { key, matches } of results) {
          const amber = key.value.endsWith(AMBER_MARK);
          if (side === 'green') leaked += matches.filter((match) => amber || match.object.tlp !== 'TLP:CLEAR').length;
          const due = key.value.endsWith(CLEAR_MARK) || (amber && side === 'unrestricted');
          if (matches.length !== (due ? 1 : 0)) wrong++;
        }
      });
    const [green, unrestricted] = [lookups('green'), lookups('unrestricted')];
    const measured = await compare({
      rounds: scale.cheapRounds,
      serviceLabel: `GREEN key: POST /intel/lookup (${scale.lookupKeys} keys)`,
      baselineLabel: `unrestricted key: the same lookups`,
      warmService: () => green(scale.warmupSeconds),
      warmBaseline: () => unrestricted(scale.warmupSeconds),
      service: async () => ({ outcome: await green(scale.cheapSeconds) }),
      baseline: async () => ({ outcome: await unrestricted(scale.cheapSeconds) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    if (leaked > 0) throw new Error(`the GREEN key's lookups matched ${leaked} AMBER objects`);
    if (wrong > 0) throw new Error(`${wrong} lookup answers (or keys in them) found other than what their key may find`);
    return [
      finishRow(LOOKUP, measured, [
        `${marked.count.toLocaleString('en-US')} DomainName objects in one collection, every other one AMBER; 2 concurrent clients, ${sets} key sets in turn`,
        `each lookup: ${stored} stored keys (the GREEN key may find ${Math.ceil(stored / 2)} of them, the unrestricted key all) and ${scale.lookupKeys - stored} never stored`,
      ]),
    ];
  },
};
