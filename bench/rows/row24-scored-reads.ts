import { setTimeout as sleep } from 'node:timers/promises';
import { parseLinks } from '../lib/api.js';
import { httpLoad, stepLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { createCollection, ROUTES, writeTargets } from './intel-setup.js';
import { benchObject } from './row3-object-add.js';
import { batchAdds } from './row10-bulk-ingest.js';
import { countLines, exportBody } from './row16-export.js';
import { occurrences } from './row25-marked-reads.js';
import { numberSeeded, SEED_CONTEXT, seedObjects, seedTarget, settleTables, type SeedTarget } from './seed.js';

type Row = RowModule['rows'][number];

const EXPORT: Row = {
  id: '24a',
  title: "row 16's export (txt of DomainName) with minScore=50, half the objects scoring below 50, vs the same export without minScore",
  unit: 'exports/s',
  target: { minRatio: 0.8 },
};
const LISTING: Row = {
  id: '24b',
  title: 'listing pages (limit 1000) with minScore=50, half the objects scoring below 50, vs listing pages without minScore',
  unit: 'pages/s',
  target: { minRatio: 0.8 },
};
const EXPLANATION: Row = {
  id: '24c',
  title: 'the explanation of a score (GET …/objects/score) vs the provenance of the same objects (report only; target p95 < 20 ms)',
  unit: 'req/s',
  target: {},
};
const DECAYED: Row = {
  id: '24d',
  title: 'the expiry job removing decayed objects (decayedAction expire), vs bulk ingest of as many new objects (row 10)',
  unit: 'objects/s',
  target: { minRatio: 0.5 },
};

/** The issue's target for the explanation's latency, reported in the notes. */
const EXPLANATION_P95_MS = 20;
/** Ranks of the api claim's reliability (src/scoring/admiralty.ts): A scores 75 with credibility 6, E 25. */
const RANK_A = 5;
const RANK_E = 0;

/** Every odd object scores 25 (an E key's claim) and says so in its value; the others 75 (an A key's). */
const LOW_MARK = '.low.b24.example';
const HIGH_MARK = '.high.b24.example';
const scoredValue = (g: number) => `s${g}${g % 2 === 1 ? LOW_MARK : HIGH_MARK}`;

interface ScoredCollection {
  name: string;
  resourceId: number;
  count: number;
  low: number;
  token: string;
}

/**
 * `count` DomainName objects seeded through the service's batch statement, their api claims then given the
 * reliability an A key's (even) or an E key's (odd) write would leave: scores 75 and 25 for a day and more
 * (DomainName decays over 300 days). Seeded once per run for `label`.
 */
async function scoredCollection(ctx: RowContext, label: string, count: number, contextJson: (g: number) => string): Promise<ScoredCollection> {
  const cached = ctx.shared.get(`scored-${label}`) as ScoredCollection | undefined;
  if (cached) return cached;
  const collection = await createCollection(ctx, `scored-${label}`);
  const target = await seedTarget(ctx, collection.name);
  await seedObjects(ctx, target, 0, count, (g) => ({ type: 'DomainName', key: { type: 'DomainName', value: scoredValue(g) }, contextJson: contextJson(g) }));
  await numberSeeded(ctx, target);
  await rateClaims(ctx, target);
  await settleTables(ctx);
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: collection.resourceId, actions: ['Read'] }] });
  const scored = { name: collection.name, resourceId: collection.resourceId, count, low: Math.floor(count / 2), token: await ctx.admin.withKey(key).token() };
  ctx.shared.set(`scored-${label}`, scored);
  return scored;
}

/** The api claims of the seeded objects as A and E keys' writes leave them (the seeding writes as F). */
async function rateClaims(ctx: RowContext, target: SeedTarget): Promise<void> {
  await ctx.setupPool.query(
    `UPDATE intel_object SET api_reliability = CASE WHEN keys->0->>'value' LIKE $2 THEN ${RANK_E} ELSE ${RANK_A} END WHERE collection_id = $1`,
    [target.collectionId, `%${LOW_MARK}`],
  );
}

/**
 * Row 24a: `GET …/export?format=txt&keyType=DomainName` of a collection of `scale.exportObjects` objects (row
 * 16's), one export at a time, with `minScore=50` against the same export without it; every line counted, and
 * every line of the filtered export checked to be a high-scoring value.
 */
export const row24a: RowModule = {
  rows: [EXPORT],
  requires: ['GET /intel/collections/{collection_id}/export'],
  async run(ctx) {
    const { scale } = ctx;
    const scored = await scoredCollection(ctx, 'export', scale.exportObjects, () => SEED_CONTEXT);
    const url = `${ctx.service.url}/intel/collections/${scored.name}/export?format=txt&keyType=DomainName`;
    const headers = { Authorization: `Bearer ${scored.token}` };
    const high = scored.count - scored.low;
    const exportOnce = async (filtered: boolean) => {
      let lines = 0;
      let tail = '';
      let low = 0;
      await exportBody(filtered ? `${url}&minScore=50` : url, headers, (chunk) => {
        lines += countLines(chunk);
        const text = tail + chunk.toString('latin1');
        low += occurrences(text, `${LOW_MARK}\n`);
        tail = text.slice(-LOW_MARK.length);
      });
      const expected = filtered ? high : scored.count;
      if (lines !== expected) throw new Error(`an export ${filtered ? 'with' : 'without'} minScore listed ${lines} lines, not ${expected}`);
      if (filtered && low > 0) throw new Error(`the export with minScore=50 listed ${low} objects scoring 25`);
    };
    const exports = (filtered: boolean) => stepLoad({ concurrency: 1, amount: 1, step: () => exportOnce(filtered) });
    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: `GET …/export?format=txt&keyType=DomainName&minScore=50 (${high} of ${scored.count} lines)`,
      baselineLabel: `GET …/export?format=txt&keyType=DomainName (${scored.count} lines)`,
      warmService: () => exports(true),
      warmBaseline: () => exports(false),
      service: async () => ({ outcome: await exports(true) }),
      baseline: async () => ({ outcome: await exports(false) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    return [
      finishRow(EXPORT, measured, [
        `${scored.count.toLocaleString('en-US')} DomainName objects, every other one scoring 25 (an E key's claim), the rest 75 (an A key's); one export at a time, every line counted`,
      ]),
    ];
  },
};

/** The pages of a walk of `firstPath` to its end, untimed, checking what it read: its page count. */
async function walkOnce(ctx: RowContext, token: string, firstPath: string, expected: { high: number; low: number }): Promise<number> {
  const api = ctx.admin.withToken(token);
  let pages = 0;
  const found = { high: 0, low: 0 };
  for (let path: string | undefined = firstPath; path !== undefined;) {
    pages++;
    const page = await api.request('GET', path);
    found.high += occurrences(page.text, `${HIGH_MARK}"`);
    found.low += occurrences(page.text, `${LOW_MARK}"`);
    path = parseLinks(page.headers.get('link') ?? undefined).next;
  }
  if (found.high !== expected.high || found.low !== expected.low) {
    throw new Error(`a walk of ${firstPath} read ${JSON.stringify(found)}, not ${JSON.stringify(expected)}`);
  }
  return pages;
}

/**
 * Row 24b: `scale.readers` readers walk the whole listing (limit `scale.pageLimit`, 1 KB contexts, row 5's size)
 * with `minScore=50` (half the objects pass: a page reads about twice the rows) against the same walk without
 * it; pages/s is the cost of one page request. One untimed walk of each checks what it reads.
 */
export const row24b: RowModule = {
  rows: [LISTING],
  requires: ['GET /intel/collections/{collection_id}/objects'],
  async run(ctx) {
    const { scale } = ctx;
    const scored = await scoredCollection(ctx, 'walk', scale.feedItems, (g) => benchObject('b24', g, scale.contextBytes).contextJson);
    const base = `/intel/collections/${scored.name}/objects?limit=${scale.pageLimit}`;
    const high = scored.count - scored.low;
    const pages = {
      filtered: await walkOnce(ctx, scored.token, `${base}&minScore=50`, { high, low: 0 }),
      plain: await walkOnce(ctx, scored.token, base, { high, low: scored.low }),
    };
    let badWalks = 0;
    const walks = (filtered: boolean) => {
      const count = filtered ? pages.filtered : pages.plain;
      const firstPath = filtered ? `${base}&minScore=50` : base;
      return (times: number) =>
        httpLoad({
          baseUrl: ctx.service.url,
          connections: scale.readers,
          amount: scale.readers * times * count,
          headers: { Authorization: `Bearer ${scored.token}` },
          requests: Array.from({ length: count }, (_, page) => ({
            method: 'GET' as const,
            setupRequest: (request, context) => ({ ...request, path: page === 0 ? firstPath : ((context.next as string | undefined) ?? firstPath) }),
            onResponse: (status, body, context, headers) => {
              context.next = parseLinks(headers.link ?? headers.Link).next;
              if (filtered && body.includes(`${LOW_MARK}"`)) badWalks++;
              if (status === 200 && (page === count - 1) === (context.next !== undefined)) badWalks++;
            },
          })),
          keepBodies: true,
        }).done;
    };
    const [filteredWalks, plainWalks] = [walks(true), walks(false)];
    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: `GET …/objects?limit=${scale.pageLimit}&minScore=50 (${pages.filtered} pages a walk)`,
      baselineLabel: `GET …/objects?limit=${scale.pageLimit} (${pages.plain} pages a walk)`,
      warmService: () => filteredWalks(1),
      warmBaseline: () => plainWalks(1),
      service: async () => ({ outcome: await filteredWalks(scale.walks) }),
      baseline: async () => ({ outcome: await plainWalks(scale.walks) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    if (badWalks > 0) throw new Error(`${badWalks} pages of the walks read a low-scoring object with minScore or ended elsewhere than their first walk`);
    return [
      finishRow(LISTING, measured, [
        `${scored.count.toLocaleString('en-US')} objects (1 KB contexts), every other one scoring 25; ${scale.readers} readers each walking the whole listing ${scale.walks === 1 ? 'once' : `${scale.walks} times`} a round; both sides show every object's score`,
      ]),
    ];
  },
};

/**
 * Row 24c: the explanation of random objects of the walked collection, 2 connections for `scale.cheapSeconds` a
 * round, against their provenance (the other read of one object's inputs); its p95 is the issue's target.
 */
export const row24c: RowModule = {
  rows: [EXPLANATION],
  requires: ['GET /intel/collections/{collection_id}/objects/score', 'GET /intel/collections/{collection_id}/objects/provenance'],
  async run(ctx) {
    const { scale } = ctx;
    const scored = await scoredCollection(ctx, 'walk', scale.feedItems, (g) => benchObject('b24', g, scale.contextBytes).contextJson);
    const reads = (route: 'score' | 'provenance') => (seconds: number) =>
      httpLoad({
        baseUrl: ctx.service.url,
        connections: 2,
        durationS: seconds,
        headers: { Authorization: `Bearer ${scored.token}` },
        requests: [
          {
            method: 'GET' as const,
            setupRequest: (request) => ({
              ...request,
              path: `/intel/collections/${scored.name}/objects/${route}?objectKeyType=DomainName&objectKey=${scoredValue(Math.floor(Math.random() * scored.count))}`,
            }),
          },
        ],
      }).done;
    const [explanations, provenances] = [reads('score'), reads('provenance')];
    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: 'GET …/objects/score (a random object)',
      baselineLabel: 'GET …/objects/provenance (a random object)',
      warmService: () => explanations(1),
      warmBaseline: () => provenances(1),
      service: async () => ({ outcome: await explanations(scale.cheapSeconds) }),
      baseline: async () => ({ outcome: await provenances(scale.cheapSeconds) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    const last = await explanations(scale.cheapSeconds);
    const p95 = last.latency.percentile(95) ?? Infinity;
    return [
      finishRow(EXPLANATION, measured, [
        `explanation p95 < ${EXPLANATION_P95_MS} ms: ${p95 < EXPLANATION_P95_MS ? 'met' : 'missed'} (${p95.toFixed(2)} ms over ${last.requests} requests, 2 connections, random objects of ${scored.count.toLocaleString('en-US')})`,
      ]),
    ];
  },
};

/**
 * Row 24d: the expiry job removing `count` decayed objects of a collection with `decayedAction: expire` (each a
 * `Remove` with reason Decayed), against row 10's bulk ingest of as many new objects (2 clients, batches of
 * 1,000, 1 KB contexts). Each round seeds its own collection (untimed): objects scoring 25 under a threshold
 * of 50, kept until a PATCH makes the collection expire them; the job's next tick (EXPIRY_INTERVAL_SECONDS)
 * removes them in batches. Its time is the database's: from the first Decayed record's transaction to the
 * moment no object is left (the wait for the tick is not the job's work).
 */
export const row24d: RowModule = {
  rows: [DECAYED],
  requires: [ROUTES.registerCollection, 'POST /intel/collections/{collection_id}/objects/batch'],
  async run(ctx) {
    const { scale } = ctx;
    const count = scale.quick ? 4_000 : 100_000;
    const size = 1000;
    const { served, headers } = await writeTargets(ctx, 'decay-ingest', ['Write']);
    let nextBatch = 0;
    let incomplete = 0;
    const ingest = (amount: number) =>
      batchAdds(
        { baseUrl: ctx.service.url, path: `/intel/collections/${served.name}/objects/batch`, headers },
        {
          clients: 2,
          size,
          contextBytes: scale.contextBytes,
          prefix: `b24d-${ctx.runId}`,
          nextBatch: () => nextBatch++,
          incomplete: () => incomplete++,
          amount,
        },
      );
    let decaying: SeedTarget | undefined;
    let round = 0;
    const prepareDecay = async () => {
      const collection = await createCollection(ctx, `decaying-${round++}`);
      await ctx.admin.request('PATCH', `/intel/collections/${collection.name}`, { json: { scoring: { threshold: 50 } }, headers: { 'If-Match': '"1"' } });
      decaying = await seedTarget(ctx, collection.name);
      await seedObjects(ctx, decaying, 0, count, (g) => ({
        type: 'DomainName',
        key: { type: 'DomainName', value: `d${g}${LOW_MARK}` },
        contextJson: SEED_CONTEXT,
      }));
      await numberSeeded(ctx, decaying);
      await rateClaims(ctx, decaying);
      await settleTables(ctx);
    };
    const decay = async () => {
      const target = decaying!;
      const started = Date.now();
      const outcome = await stepLoad({
        concurrency: 1,
        amount: 1,
        step: async () => {
          await ctx.admin.request('PATCH', `/intel/collections/${target.name}`, {
            json: { scoring: { threshold: 50, decayedAction: 'expire' } },
            headers: { 'If-Match': '"2"' },
            expect: [204],
          });
          for (;;) {
            const { rows } = await ctx.setupPool.query<{ n: number }>('SELECT count(*)::int AS n FROM intel_object WHERE collection_id = $1', [
              target.collectionId,
            ]);
            if (rows[0].n === 0) return;
            if (Date.now() - started > 600_000) throw new Error('the expiry job left decayed objects for 10 minutes');
            await sleep(20);
          }
        },
      });
      const { rows } = await ctx.setupPool.query<{ first: Date; removed: number }>(
        `SELECT min(created_at) AS first, count(*)::int AS removed FROM intel_change WHERE collection_id = $1 AND operation = 'Remove' AND reason = 'Decayed'`,
        [target.collectionId],
      );
      if (rows[0].removed !== count) throw new Error(`the job wrote ${rows[0].removed} Decayed removals, not ${count}`);
      const elapsedS = (Date.now() - rows[0].first.getTime()) / 1000;
      return { outcome: { ...outcome, elapsedS }, units: count };
    };
    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: `expiry job: ${count.toLocaleString('en-US')} decayed objects removed (Remove Decayed each)`,
      baselineLabel: `POST …/objects/batch: ${count.toLocaleString('en-US')} new objects in batches of ${size} (row 10)`,
      prepareService: prepareDecay,
      warmBaseline: () => ingest(Math.max(2, count / size / 10)),
      service: decay,
      baseline: async () => ({ outcome: await ingest(count / size), units: count }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    if (incomplete > 0) throw new Error(`${incomplete} batches did not add all their objects`);
    return [
      finishRow(DECAYED, measured, [
        `the job's time from its first Decayed record to an empty collection (the wait for its tick excluded); the collection seeded per round through the batch statement`,
      ]),
    ];
  },
};
