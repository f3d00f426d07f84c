/**
 * `npm run bench -- --scale [--sizes 10k,100k,1M,10M]`: how the cost of the hot paths grows with the data.
 * Outside the default run (a 10M run takes most of an hour on 2 cores). One collection is grown through the
 * service's batch statement, its records numbered by the service (rows/seed.ts), to each size in turn (VACUUM
 * ANALYZE after each), and at each size the
 * service is asked, over HTTP, one request at a time (latency, not throughput):
 *   object add · first listing page · a feed page at the tail · lookup of one key ·
 *   a listing page at the start of a burst of rows that ANALYZE has not seen
 * with the database size per object and the shared buffers per call of the service's listing statement.
 * Prints a table, writes bench/scale-results.json and the chart bench/scale.svg.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { Api } from './lib/api.js';
import { poolFor, provideDatabase, type BenchDatabase } from './lib/database.js';
import { startService, type ServiceHandle } from './lib/service.js';
import { benchSchema } from './rows/intel-setup.js';
import { numberSeeded, seedObjects, seedTarget, type Seeder, type SeedObject, type SeedTarget } from './rows/seed.js';
import { loadServiceStatements } from './rows/service-statements.js';

const SAMPLES = 30;
const PAGE = 1000;
/** The burst added after the last ANALYZE at each size (a bulk ingest a follower meets next). */
const BURST = 200_000;

interface SizeResult {
  objects: number;
  addMs: number;
  firstPageMs: number;
  feedTailMs: number;
  lookupMs: number;
  unseenPageMs: number;
  firstPageBuffers: number;
  unseenPageBuffers: number;
  bytesPerObject: number;
}

function parseSize(text: string): number {
  const match = /^(\d+)([kM]?)$/.exec(text.trim());
  if (!match) throw new Error(`--sizes: "${text}" is not a count like 10k or 1M`);
  return Number(match[1]) * (match[2] === 'k' ? 1e3 : match[2] === 'M' ? 1e6 : 1);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function timed(times: number, request: (i: number) => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await request(i);
    samples.push(performance.now() - started);
  }
  return median(samples);
}

/** Object g of the scale collection. */
const scaleObject = (g: number): SeedObject => ({
  type: 'DomainName',
  key: { type: 'DomainName', value: `d${g}.example` },
  contextJson: JSON.stringify({ score: g % 100, source: 'scale' }),
});

/** Objects g in [from, to] of the collection, through the service's batch statement, numbered by the service (rows/seed.ts). */
async function seed(seeder: Seeder, target: SeedTarget, from: number, to: number): Promise<void> {
  await seedObjects(seeder, target, from, to - from + 1, scaleObject);
  await numberSeeded(seeder, target);
}

/**
 * Runs `work` (requests to one listing) and returns its median ms with the shared buffers per call of the
 * listing statement the service ran meanwhile (pg_stat_statements: the service's own statement, whatever
 * its build; NaN where the statistics are not loaded).
 */
async function listingWithBuffers(pool: pg.Pool, db: BenchDatabase, work: () => Promise<number>): Promise<{ ms: number; buffers: number }> {
  if (db.statementStats) await pool.query('SELECT pg_stat_statements_reset()');
  const ms = await work();
  if (!db.statementStats) return { ms, buffers: NaN };
  const { rows } = await pool.query(
    `SELECT sum(shared_blks_hit + shared_blks_read)::float8 / nullif(sum(calls), 0) AS per
       FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND query LIKE '%FROM intel_object%' AND query LIKE '%LIMIT%' AND query NOT LIKE '%pg_stat_statements%'`,
  );
  return { ms, buffers: Math.round(Number(rows[0].per)) };
}

function chart(results: SizeResult[]): string {
  const series: [keyof SizeResult, string, string][] = [
    ['addMs', 'object add', '#1f77b4'],
    ['firstPageMs', 'first listing page', '#2ca02c'],
    ['feedTailMs', 'feed page at the tail', '#9467bd'],
    ['lookupMs', 'lookup of one key', '#ff7f0e'],
    ['unseenPageMs', 'page into rows ANALYZE has not seen', '#d62728'],
  ];
  const [w, h, left, top, right, bottom] = [720, 400, 60, 20, 260, 50];
  const xs = results.map((r) => Math.log10(r.objects));
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs) || 1];
  const yMax = Math.max(1, ...results.flatMap((r) => series.map(([key]) => r[key]))) * 1.1;
  const x = (n: number) => left + ((Math.log10(n) - xMin) / Math.max(1e-9, xMax - xMin)) * (w - left - right);
  const y = (ms: number) => top + (1 - ms / yMax) * (h - top - bottom);
  const lines = series.map(([key, label, color], i) => {
    const points = results.map((r) => `${x(r.objects).toFixed(1)},${y(r[key]).toFixed(1)}`).join(' ');
    return (
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points}"/>` +
      `<text x="${w - right + 15}" y="${top + 20 + i * 22}" fill="${color}" font-size="13">${label}</text>`
    );
  });
  const ticks = results.map(
    (r) => `<text x="${x(r.objects)}" y="${h - bottom + 20}" font-size="12" text-anchor="middle">${r.objects.toLocaleString('en')}</text>`,
  );
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map(
    (f) => `<text x="${left - 8}" y="${y(f * yMax) + 4}" font-size="12" text-anchor="end">${(f * yMax).toFixed(1)}</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<line x1="${left}" y1="${h - bottom}" x2="${w - right}" y2="${h - bottom}" stroke="black"/>
<line x1="${left}" y1="${top}" x2="${left}" y2="${h - bottom}" stroke="black"/>
<text x="${(left + w - right) / 2}" y="${h - 10}" font-size="13" text-anchor="middle">objects in the collection (log scale)</text>
<text x="15" y="${(top + h - bottom) / 2}" font-size="13" transform="rotate(-90 15 ${(top + h - bottom) / 2})" text-anchor="middle">median ms per request</text>
${[...lines, ...ticks, ...yTicks].join('\n')}
</svg>\n`;
}

export async function runScale(options: { serviceDir: string; repoRoot: string; sizes?: string }): Promise<number> {
  const sizes = (options.sizes ?? '10k,100k,1M')
    .split(',')
    .map(parseSize)
    .sort((a, b) => a - b);
  const log = (message: string) => process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
  const runDir = await mkdtemp(join(os.tmpdir(), 'ids-scale-'));
  let db: BenchDatabase | undefined;
  let service: ServiceHandle | undefined;
  let pool: pg.Pool | undefined;
  try {
    db = await provideDatabase({ serviceDir: options.serviceDir, runDir, quick: false });
    service = await startService({ serviceDir: options.serviceDir, databaseUrl: db.serviceUrl, runDir, repoRoot: options.repoRoot, nodeArgs: [] });
    pool = poolFor(db.setupUrl, 2);
    const admin = new Api(service.url, { 'X-Api-Key': service.adminKey });
    await admin.request('POST', '/intel/schemas', { json: benchSchema('scale') });
    await admin.request('POST', '/intel/collections', { json: { name: 'scale', schemaID: 'scale' } });
    const seeder: Seeder = { admin, statements: await loadServiceStatements(options.serviceDir), setupPool: pool, runId: 'scale' };
    const target = await seedTarget(seeder, 'scale');
    const collectionId = target.collectionId;
    for (const table of ['intel_object', 'intel_object_key', 'intel_change']) {
      await pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    }
    const results: SizeResult[] = [];
    // Objects seeded (named d1…d<seeded>, bursts included) and added over HTTP: together the size.
    let seeded = 0;
    let added = 0;
    for (const size of sizes) {
      log(`seeding to ${size.toLocaleString('en')} objects`);
      await seed(seeder, target, seeded + 1, size - added);
      seeded = size - added;
      // The figures are labelled with `size`: the collection must hold exactly that many objects.
      const { rows: counted } = await pool.query(`SELECT count(*)::int AS n FROM intel_object WHERE collection_id = $1`, [collectionId]);
      if (counted[0].n !== size) throw new Error(`the collection holds ${counted[0].n} objects, not ${size}`);
      await pool.query('VACUUM ANALYZE intel_object, intel_object_key, intel_change');
      const path = '/intel/collections/scale/objects';
      const addMs = await timed(SAMPLES, (i) =>
        admin.request('POST', path, { json: { type: 'DomainName', keys: [{ type: 'DomainName', value: `new-${size}-${i}.example` }], context: { score: 1 } } }),
      );
      added += SAMPLES;
      const first = await listingWithBuffers(pool, db, () => timed(SAMPLES, () => admin.request('GET', `${path}?limit=${PAGE}`)));
      const { rows: last } = await pool.query(`SELECT last_seq FROM intel_collection WHERE id = $1`, [collectionId]);
      const tailCursor = encodeURIComponent(Buffer.from(JSON.stringify({ c: collectionId, s: Number(last[0].last_seq) - PAGE })).toString('base64url'));
      const feed = await admin.request('GET', `${path}/changes?limit=${PAGE}&cursor=${tailCursor}`, { expect: [200, 400] });
      const feedTailMs = feed.status === 200 ? await timed(SAMPLES, () => admin.request('GET', `${path}/changes?limit=${PAGE}&cursor=${tailCursor}`)) : NaN;
      const lookup = (i: number, expect = [200]) =>
        admin.request('POST', '/intel/lookup', { json: { keys: [{ type: 'DomainName', value: `d${1 + ((i * 7919) % seeded)}.example` }] }, expect });
      // Builds from before the lookup endpoint (for before/after runs) report no figure for it.
      const lookupMs = (await lookup(0, [200, 404])).status === 200 ? await timed(SAMPLES, (i) => lookup(i)) : NaN;
      const { rows: top } = await pool.query(`SELECT max(id) AS id FROM intel_object WHERE collection_id = $1`, [collectionId]);
      const burst = Math.min(BURST, size);
      log(`adding a burst of ${burst.toLocaleString('en')} objects that ANALYZE will not see`);
      await seed(seeder, target, seeded + 1, seeded + burst);
      seeded += burst;
      const cursor = encodeURIComponent(Buffer.from(JSON.stringify({ a: Number(top[0].id) })).toString('base64url'));
      const unseen = await listingWithBuffers(pool, db, () => timed(SAMPLES, () => admin.request('GET', `${path}?limit=${PAGE}&cursor=${cursor}`)));
      const { rows: bytes } = await pool.query(
        `SELECT (pg_total_relation_size('intel_object') + pg_total_relation_size('intel_object_key') + pg_total_relation_size('intel_change'))::float8 / count(*) AS per
           FROM intel_object`,
      );
      const result = {
        objects: size,
        addMs,
        firstPageMs: first.ms,
        feedTailMs,
        lookupMs,
        unseenPageMs: unseen.ms,
        firstPageBuffers: first.buffers,
        unseenPageBuffers: unseen.buffers,
        bytesPerObject: Math.round(bytes[0].per),
      };
      log(JSON.stringify(result));
      results.push(result);
    }
    const table = [
      '| objects | add (ms) | first page (ms) | feed tail page (ms) | lookup 1 key (ms) | page into unseen burst (ms) | listing buffers per page: first / into burst | bytes per object |',
      '|---|---|---|---|---|---|---|---|',
      ...results.map(
        (r) =>
          `| ${r.objects.toLocaleString('en')} | ${r.addMs.toFixed(2)} | ${r.firstPageMs.toFixed(2)} | ${r.feedTailMs.toFixed(2)} | ${r.lookupMs.toFixed(2)} | ${r.unseenPageMs.toFixed(2)} | ${r.firstPageBuffers} / ${r.unseenPageBuffers} | ${r.bytesPerObject} |`,
      ),
    ].join('\n');
    process.stdout.write(`${table}\n`);
    await writeFile(
      join(options.repoRoot, 'bench', 'scale-results.json'),
      JSON.stringify({ date: new Date().toISOString(), loadavg: os.loadavg(), results }, null, 2),
    );
    await writeFile(join(options.repoRoot, 'bench', 'scale.svg'), chart(results));
    return 0;
  } finally {
    await pool?.end().catch(() => undefined);
    await service?.server.stop().catch(() => undefined);
    await db?.stop().catch(() => undefined);
  }
}
