import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Api } from '../lib/api.js';
import { sequentialHttpLoad } from '../lib/load.js';
import { MemoryWindow } from '../lib/memory.js';
import { finishRow, type RowContext, type RowModule, type SideResult } from '../lib/row.js';
import { createCollection } from './intel-setup.js';

const ROW20 = {
  id: '20',
  title: 'source run: a 1,000,000-line text snapshot into an empty collection, against the batch endpoint writing the same objects',
  unit: 'lines/s',
  target: { minRatio: 0.7, maxGrowthMiB: 128 },
};
/** 20b and 20c are times against the first run's: "≤ 0.25 of it" is a throughput ratio ≥ 4, "≤ 0.4" one ≥ 2.5. */
const ROW20B = { id: '20b', title: 'source run: the same body again (200, no ETag), against the first run', unit: 'lines/s', target: { minRatio: 4 } };
const ROW20C = { id: '20c', title: 'source run: 1 % of the lines replaced, against the first run', unit: 'lines/s', target: { minRatio: 2.5 } };

const CONTEXT = { source: 'bench source' };
/** Objects per batch request of the baseline: the most one takes (MAX_BATCH_ITEMS). */
const BATCH = 10_000;

/** Line `i` of the list: a distinct address (i < 2^24). */
const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const listOf = (indexes: Iterable<number>) => {
  const lines: string[] = ['# bench list'];
  for (const i of indexes) lines.push(address(i));
  return Buffer.from(lines.join('\n') + '\n');
};
function* range(from: number, to: number) {
  for (let i = from; i < to; i++) yield i;
}

interface RunLog {
  runID: string;
  outcome: string | null;
  finishedAt: string | null;
  items: number;
  added: number;
  updated: number;
  withdrawn: number;
  rejected: number;
  error: { code: string; message: string } | null;
}

/** A side measured once: `units` lines in `elapsedS`, with the service's memory over it when watched. */
function side(label: string, units: number, elapsedS: number, requests: number, memory?: SideResult['memory']): SideResult {
  return { label, throughput: units / elapsedS, units, requests, allRequests: requests, elapsedS, memory };
}

/**
 * Rows 20, 20b, 20c (extensions §17): a local HTTP server (started here, plain `http`, no ETag) serves a
 * text list; an instance of the measured build of its own (the schedule off, the fetch deadline out of the
 * way of a loaded machine) runs a `snapshot` source of it (started with `POST …/runs`, timed until its log
 * row is closed). 20: the first run into an empty collection against `POST …/objects/batch` of the same
 * objects (IPAddress, the source's context) in batches of 10,000, one at a time, into a collection of its
 * own, with the instance's RSS growth over the run. 20b: the same body again (no ETag, so fetched, parsed
 * and staged again): `unchanged`, no change record. 20c: 1 % of the lines replaced: exactly those
 * changes recorded (an Add per new line, a Remove `Withdrawn` per dropped one).
 */
export const row20: RowModule = {
  rows: [ROW20, ROW20B, ROW20C],
  requires: [
    'POST /intel/sources',
    'POST /intel/sources/{name}/runs',
    'GET /intel/sources/{name}/runs',
    'POST /intel/collections/{collection_id}/objects/batch',
  ],
  async run(ctx: RowContext) {
    // --quick: 5,000 lines (enough for the bench's own test); ROW20_LINES sets another quick size to measure a change with.
    const lines = ctx.scale.quick ? Number(process.env.ROW20_LINES ?? 5_000) : 1_000_000;
    let body = listOf(range(0, lines));
    const server: Server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) }).end(body);
    });
    // No keep-alive timer: it starts once the body is handed to the kernel, and a run that stages the body as
    // it reads it may leave the end of a large one unread longer than the default 5 s, then cut off.
    server.keepAliveTimeout = 0;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const feedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/list.txt`;
    const instance = await ctx.startServiceVariant('sources', { SOURCE_POLL_SECONDS: '3600', SOURCE_TIMEOUT_SECONDS: '86400' });
    try {
      const api = new Api(instance.url, { 'X-Api-Key': instance.adminKey });
      const [sourced, batched] = [await createCollection(ctx, 'source'), await createCollection(ctx, 'source-batch')];
      const name = `bench-${ctx.runId}`;
      // Disabled: only the runs started here, never the schedule of any instance.
      await api.request('POST', '/intel/sources', { json: { name, collection: sourced.name, kind: 'text', url: feedUrl, enabled: false, context: CONTEXT } });
      const records = async () =>
        Number(
          (
            await ctx.setupPool.query(`SELECT count(*)::int AS n FROM intel_change r JOIN intel_collection k ON k.id = r.collection_id WHERE k.name = $1`, [
              sourced.name,
            ])
          ).rows[0].n,
        );

      /** One run, timed from its start to its closed log row. */
      const run = async (): Promise<{ log: RunLog; elapsedS: number }> => {
        const t0 = performance.now();
        const started = await api.request('POST', `/intel/sources/${name}/runs`, { expect: [202] });
        const { runID } = started.body as { runID: string };
        for (;;) {
          const log = (await api.request('GET', `/intel/sources/${name}/runs?limit=5`)).body as RunLog[];
          const found = log.find((entry) => entry.runID === runID);
          if (found?.finishedAt) {
            if (found.outcome === 'failed') throw new Error(`the source run failed: ${JSON.stringify(found.error)}`);
            return { log: found, elapsedS: (performance.now() - t0) / 1000 };
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };

      // 20: the first run (memory watched), then the baseline.
      const window = new MemoryWindow(instance.server.probe).start();
      const first = await run();
      const memory = window.stop();
      if (first.log.added !== lines || (await records()) !== lines) throw new Error(`the first run added ${first.log.added} of ${lines} lines`);
      let incomplete = 0;
      let sent = 0;
      const objects = (from: number, to: number) =>
        JSON.stringify([...range(from, to)].map((i) => ({ type: 'IPAddress', keys: [{ type: 'IPAddress', value: address(i) }], context: CONTEXT })));
      const baseline = await sequentialHttpLoad({
        baseUrl: instance.url,
        amount: Math.ceil(lines / BATCH),
        headers: { 'X-Api-Key': instance.adminKey, 'Content-Type': 'application/json' },
        timeoutS: 600,
        next: () => {
          const from = sent;
          sent = Math.min(lines, sent + BATCH);
          return {
            method: 'POST',
            path: `/intel/collections/${batched.name}/objects/batch`,
            body: Buffer.from(objects(from, sent)),
            onResponse: (status, text) => {
              if (status === 200 && (JSON.parse(text) as { added: number }).added !== sent - from) incomplete++;
            },
          };
        },
      });
      if (incomplete > 0 || baseline.requests !== Math.ceil(lines / BATCH)) throw new Error(`${incomplete} batches did not add all their objects`);
      const firstSide = side(`source run: first, ${lines} lines (snapshot, text)`, lines, first.elapsedS, 1, memory);
      const row20 = finishRow(
        ROW20,
        { service: firstSide, baseline: side(`POST …/objects/batch, ${BATCH} objects a request, one at a time`, lines, baseline.elapsedS, baseline.requests) },
        [
          `one run of ${lines} lines against ${baseline.requests} batch requests of the same objects into a collection of their own; RSS growth over the run ${memory.growthMiB.toFixed(1)} MiB`,
        ],
      );

      // 20b: the same body again.
      const before = await records();
      const again = await run();
      const repeatRecords = (await records()) - before;
      if (again.log.outcome !== 'unchanged' || repeatRecords !== 0)
        throw new Error(`the same body again: outcome ${again.log.outcome}, ${repeatRecords} change records`);
      const firstAgain = side('source run: first', lines, first.elapsedS, 1);
      const row20b = finishRow(ROW20B, { service: side('source run: the same body again', lines, again.elapsedS, 1), baseline: firstAgain }, [
        `${(again.elapsedS / first.elapsedS).toFixed(2)} of the first run's time; outcome unchanged, ${repeatRecords} change records`,
      ]);

      // 20c: 1 % of the lines replaced by new ones.
      const replaced = lines / 100;
      body = listOf(
        (function* () {
          yield* range(replaced, lines);
          yield* range(lines, lines + replaced);
        })(),
      );
      const beforeChange = await records();
      const changed = await run();
      const changeRecords = (await records()) - beforeChange;
      if (changed.log.added !== replaced || changed.log.withdrawn !== replaced || changeRecords !== 2 * replaced) {
        throw new Error(
          `1 % replaced: added ${changed.log.added}, withdrawn ${changed.log.withdrawn}, ${changeRecords} change records (expected ${replaced}, ${replaced}, ${2 * replaced})`,
        );
      }
      const row20c = finishRow(ROW20C, { service: side('source run: 1 % of the lines replaced', lines, changed.elapsedS, 1), baseline: firstAgain }, [
        `${(changed.elapsedS / first.elapsedS).toFixed(2)} of the first run's time; ${changeRecords} change records = ${replaced} Add + ${replaced} Remove (Withdrawn)`,
      ]);
      return [row20, row20b, row20c];
    } finally {
      await instance.server.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  },
};
