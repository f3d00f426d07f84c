import http from 'node:http';
import pg from 'pg';
import { httpLoad, stepLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { SEED_CONTEXT, seededCollection, type SeedObject } from './seed.js';

const ROW = {
  id: '16',
  title: 'blocklist export: txt of one key type over the seeded collection',
  unit: 'objects/s',
  target: { minRatio: 0.5, maxGrowthMiB: 64 },
};
/** The target for a conditional GET that hits (304), reported in the notes. */
const TARGET_304_P50_MS = 5;

/** Object `g` of the exported collection: a domain name. */
export const domainObject = (g: number): SeedObject => ({
  type: 'DomainName',
  key: { type: 'DomainName', value: `host${g}.export.example` },
  contextJson: SEED_CONTEXT,
});

/** Newlines of a body, counted as it streams (the bench holds none of it). */
export function countLines(chunk: Buffer): number {
  let lines = 0;
  for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) lines++;
  return lines;
}

/** GETs `url` and hands each chunk of its body to `onChunk` as it streams; rejects unless 200. */
export function exportBody(url: string, headers: Record<string, string>, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`export answered ${response.statusCode}`));
          return;
        }
        response.on('data', onChunk);
        response.on('end', () => resolve());
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

/** GETs `url` and counts the lines of its body; rejects unless 200. */
export async function exportLines(url: string, headers: Record<string, string>): Promise<number> {
  let lines = 0;
  await exportBody(url, headers, (chunk) => (lines += countLines(chunk)));
  return lines;
}

/** Runs `COPY (sql) TO STDOUT` on a raw `pg` client and counts the lines it sends (what pg-copy-streams does underneath). */
function copyLines(client: pg.PoolClient, sql: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let lines = 0;
    const query = new pg.Query(`COPY (${sql}) TO STDOUT`);
    (query as unknown as { handleCopyData: (message: { chunk: Buffer }) => void }).handleCopyData = (message) => {
      lines += countLines(message.chunk);
    };
    query.on('end', () => resolve(lines));
    query.on('error', reject);
    void client.query(query);
  });
}

/**
 * Row 16: `GET .../export?format=txt&keyType=DomainName` of a collection of `scale.exportObjects` objects
 * (seeded through the service's batch statement), one export at a time, every line counted; against raw `pg` running the service's select
 * as `COPY (…) TO STDOUT` (PostgreSQL's fastest way out). The service's memory growth over the row is its
 * second target. Then a conditional GET with the current ETag, which must be 304, timed on its own.
 */
export const row16: RowModule = {
  rows: [ROW],
  requires: ['GET /intel/collections/{collection_id}/export'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const count = scale.exportObjects;
    const collection = await seededCollection(ctx, 'export', 0, count, domainObject);
    const { key } = await ctx.admin.createKey({ permissions: [{ resource: collection.resourceId, actions: ['Read'] }] });
    const headers = { Authorization: `Bearer ${await ctx.admin.withKey(key).token()}` };
    const path = `/intel/collections/${collection.name}/export?format=txt&keyType=DomainName`;

    const exported = (lines: number) => {
      if (lines !== count) throw new Error(`an export listed ${lines} lines, not ${count}`);
    };
    const served = () => stepLoad({ concurrency: 1, amount: 1, step: async () => exported(await exportLines(`${ctx.service.url}${path}`, headers)) });
    // The service's statement with its values inlined as literals: COPY takes no parameters.
    const { EXPORT_STATEMENTS } = ctx.statements.export;
    const params = { format: 'txt', keyType: 'DomainName', urlScheme: 'keep' } as const;
    const { text, values } = EXPORT_STATEMENTS.rows(collection.collectionId, params, ctx.statements.readPolicy.UNFILTERED);
    const sql = text.replace(/\$(\d+)\b/g, (_, n: string) => pg.Client.prototype.escapeLiteral(String(values[Number(n) - 1])));
    const raw = async () => {
      const client = await ctx.baselinePool.connect();
      try {
        return await stepLoad({ concurrency: 1, amount: 1, step: async () => exported(await copyLines(client, sql)) });
      } finally {
        client.release();
      }
    };
    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: `GET …/export?format=txt&keyType=DomainName (${count} lines)`,
      baselineLabel: 'raw pg: COPY (same select) TO STDOUT',
      warmService: served,
      warmBaseline: raw,
      service: async () => ({ outcome: await served(), units: count }),
      baseline: async () => ({ outcome: await raw(), units: count }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
    });

    const tag = (await ctx.admin.withKey(key).request('HEAD', path)).headers.get('etag');
    if (!tag) throw new Error('the export answered without an ETag');
    const notModified = await httpLoad({
      baseUrl: ctx.service.url,
      connections: 1,
      durationS: scale.cheapSeconds,
      headers: { ...headers, 'If-None-Match': tag },
      requests: [{ method: 'GET', path }],
      accept: (status) => status === 304,
    }).done;
    if (notModified.requests === 0 || notModified.failures.errors + Object.keys(notModified.failures.statuses).length > 0) {
      throw new Error(`conditional GETs with the current ETag were not all 304: ${JSON.stringify(notModified.failures)}`);
    }
    const p50 = notModified.latency.percentile(50) ?? Infinity;
    return [
      finishRow(ROW, measured, [
        `${count.toLocaleString('en-US')} DomainName objects, one export at a time, every line counted on both sides`,
        `If-None-Match hit (304), p50 < ${TARGET_304_P50_MS} ms: ${p50 < TARGET_304_P50_MS ? 'met' : 'missed'} (${p50.toFixed(2)} ms over ${notModified.requests} requests)`,
      ]),
    ];
  },
};
