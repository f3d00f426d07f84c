import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { stepLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { lookupLoad, seededLookup } from './lookup-setup.js';
import { domainObject, exportLines } from './row16-export.js';
import { seededCollection } from './seed.js';

const LOOKUP = {
  id: '22a',
  title: 'lookup of 1,000 keys, 20 enabled warninglists (1,000,000 entries) vs no list',
  unit: 'lookups/s',
  target: { minRatio: 0.8 },
};
const EXPORT = { id: '22b', title: 'export of row 16 with those warninglists vs no list', unit: 'objects/s', target: { minRatio: 0.8 } };
/** §17's absolute target for `check` of CHECK_VALUES values, reported in the notes of 22a. */
const CHECK_TARGET_S = 2;
const CHECK_VALUES = 100_000;
/** Every hundredth exported domain is on a list: the export's first pass finds real exclusions. */
const EXCLUDED_EVERY = 100;

/** The IPv4 address `n` (dotted). */
const ipv4 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/**
 * The 20 lists, 1,000,000 entries in all, of every kind in the proportions published lists have (hostnames
 * the most, as the top-1M lists; few substrings): 8 hostname lists of 60,000 names, 6 cidr lists of 50,000
 * addresses and /24 networks, 4 values lists of 50,000 hashes, 2 substring lists of 10,000. All act at
 * `excludeFromExport`, so the export reads its keys against them.
 */
function benchLists(runId: string, exportCount: number, share: number): { name: string; kind: string; entries: string[] }[] {
  const lists: { name: string; kind: string; entries: string[] }[] = [];
  const range = (count: number, entry: (i: number) => string) => Array.from({ length: Math.round(count * share) }, (_, i) => entry(i));
  for (let l = 0; l < 8; l++) {
    const entries = range(60_000, (i) => `n${i}.l${l}.bench22.example`);
    if (l === 0) for (let g = 0; g < exportCount; g += EXCLUDED_EVERY) entries[g / EXCLUDED_EVERY] = domainObject(g).key.value;
    lists.push({ name: `b22-${runId}-host${l}`, kind: 'hostname', entries });
  }
  for (let l = 0; l < 6; l++) {
    lists.push({
      name: `b22-${runId}-cidr${l}`,
      kind: 'cidr',
      entries: range(50_000, (i) => (i % 2 === 0 ? ipv4(((11 + l) << 24) + i) : `${ipv4(((30 + l) << 24) + i * 256)}/24`)),
    });
  }
  for (let l = 0; l < 4; l++) {
    lists.push({ name: `b22-${runId}-values${l}`, kind: 'values', entries: range(50_000, (i) => createHash('md5').update(`b22 ${l} ${i}`).digest('hex')) });
  }
  for (let l = 0; l < 2; l++) lists.push({ name: `b22-${runId}-sub${l}`, kind: 'substring', entries: range(10_000, (i) => `s${l}x${i}q`) });
  return lists;
}

/**
 * Row 22 (extensions §17): the cost of warninglists where they act on every request. 22a: `POST
 * /intel/lookup` of row 11's key sets with the 20 lists enabled, against the same lookups with them
 * disabled; 22b: row 16's export (a collection of its size, one domain in a hundred on a list) with the
 * lists, against the export with them disabled. Both sides are the service; the lists are enabled before
 * each service round and disabled before each baseline round (untimed: enabling compiles their entries
 * again, warmed by one request). Then `check` of 100,000 values with the lists enabled, timed on its own.
 */
export const row22: RowModule = {
  rows: [LOOKUP, EXPORT],
  requires: ['POST /intel/lookup', 'GET /intel/collections/{collection_id}/export', 'POST /intel/warninglists/check'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const count = scale.exportObjects;
    // Built first: seconds of work between two requests would let the service close the idle keep-alive
    // connection (KEEP_ALIVE_TIMEOUT_SECONDS, 5 s) just as fetch reuses it for the next POST (EPIPE).
    // The quick scale (which proves the row runs) loads a hundredth of the entries and checks a hundredth of the values.
    const share = scale.quick ? 0.01 : 1;
    const checkValues = CHECK_VALUES * share;
    const lists = benchLists(ctx.runId, count, share);
    const values = Array.from(
      { length: checkValues },
      (_, i) =>
        [`n${i}.l${i % 8}.bench22.example`, ipv4((11 << 24) + i), `https://h${i}.s0x${i}q.example/p`, createHash('md5').update(`c${i}`).digest('hex')][i % 4],
    );
    const lookup = await seededLookup(ctx);
    const collection = await seededCollection(ctx, 'export22', 0, count, domainObject);
    for (const list of lists) await ctx.admin.request('POST', '/intel/warninglists', { json: { ...list, action: 'excludeFromExport', enabled: false } });
    const listed = Math.ceil(count / EXCLUDED_EVERY);

    let enabled = false;
    const setEnabled = async (on: boolean) => {
      if (enabled === on) return;
      for (const list of lists) {
        const tag = (await ctx.admin.request('GET', `/intel/warninglists/${list.name}`)).headers.get('etag')!;
        await ctx.admin.request('PATCH', `/intel/warninglists/${list.name}`, { json: { enabled: on }, headers: { 'If-Match': tag } });
      }
      enabled = on;
      // The first request after a change compiles the lists: not measured.
      await ctx.admin.request('POST', '/intel/lookup', { json: { keys: lookup.keySets[0] } });
    };

    // 22a: lookups.
    let wrong = 0;
    const lookups = lookupLoad(ctx, lookup.token, lookup.keySets, (status, body) => {
      if (status === 200 && (JSON.parse(body) as unknown[]).length !== scale.lookupKeys) wrong++;
    });
    const lookupMeasured = await compare({
      rounds: scale.cheapRounds,
      serviceLabel: `POST /intel/lookup (${scale.lookupKeys} keys), 20 lists enabled`,
      baselineLabel: 'the same, no list enabled',
      warmService: async () => (await setEnabled(true), lookups(scale.warmupSeconds)),
      warmBaseline: async () => (await setEnabled(false), lookups(scale.warmupSeconds)),
      prepareService: () => setEnabled(true),
      prepareBaseline: () => setEnabled(false),
      service: async () => ({ outcome: await lookups(scale.cheapSeconds) }),
      baseline: async () => ({ outcome: await lookups(scale.cheapSeconds) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    if (wrong > 0) throw new Error(`${wrong} lookups did not answer every key`);

    // `check` of 100,000 values of every type, the lists enabled.
    await setEnabled(true);
    const started = performance.now();
    const checked = (await ctx.admin.request('POST', '/intel/warninglists/check', { json: { values } })).body as unknown[];
    const checkSeconds = (performance.now() - started) / 1000;
    if (checked.length !== checkValues) throw new Error(`check answered ${checked.length} values, not ${checkValues}`);

    // 22b: exports.
    const { key } = await ctx.admin.createKey({ permissions: [{ resource: collection.resourceId, actions: ['Read'] }] });
    const headers = { Authorization: `Bearer ${await ctx.admin.withKey(key).token()}` };
    const url = `${ctx.service.url}/intel/collections/${collection.name}/export?format=txt&keyType=DomainName`;
    const exportWith = (on: boolean) => () =>
      stepLoad({
        concurrency: 1,
        amount: 1,
        step: async () => {
          const lines = await exportLines(url, headers);
          if (lines !== (on ? count - listed : count)) throw new Error(`an export listed ${lines} lines`);
        },
      });
    // Each round's first export of a state (after the lists are toggled: new revisions) reads and matches every
    // key; a firewall's repeated polls of an unchanged collection do not. Measured: the repeat; the first one
    // is clocked in the preparation and reported beside it.
    const firstExports = { on: [] as number[], off: [] as number[] };
    const firstExport = (on: boolean) => async () => {
      await setEnabled(on);
      const started = performance.now();
      await exportWith(on)();
      firstExports[on ? 'on' : 'off'].push(performance.now() - started);
    };
    const exportMeasured = await compare({
      rounds: scale.rounds,
      serviceLabel: `GET …/export?format=txt&keyType=DomainName (${count} objects, ${listed} listed), 20 lists`,
      baselineLabel: 'the same, no list enabled',
      warmService: async () => (await setEnabled(true), exportWith(true)()),
      warmBaseline: async () => (await setEnabled(false), exportWith(false)()),
      prepareService: firstExport(true),
      prepareBaseline: firstExport(false),
      service: async () => ({ outcome: await exportWith(true)(), units: count }),
      baseline: async () => ({ outcome: await exportWith(false)(), units: count }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    await setEnabled(false);

    return [
      finishRow(LOOKUP, lookupMeasured, [
        `20 lists (8 hostname, 6 cidr, 4 values, 2 substring), 1,000,000 entries, all excludeFromExport; ${scale.lookupObjects.toLocaleString('en-US')} objects as row 11`,
        `check of ${checkValues.toLocaleString('en-US')} values < ${CHECK_TARGET_S} s: ${checkSeconds < CHECK_TARGET_S ? 'met' : 'missed'} (${checkSeconds.toFixed(2)} s, one request)`,
      ]),
      finishRow(EXPORT, exportMeasured, [
        `${count.toLocaleString('en-US')} DomainName objects, one in ${EXCLUDED_EVERY} on a list; one export at a time, every line counted`,
        `measured: an export repeated at an unchanged state; the first export after a change of the lists (untimed in the ratio): ${mean(firstExports.on)} ms with lists, ${mean(firstExports.off)} ms without`,
      ]),
    ];
  },
};

const mean = (values: number[]) => (values.reduce((sum, value) => sum + value, 0) / values.length).toFixed(0);
