import { dbLoad } from '../lib/load.js';
import { finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { compareReads, lookupLoad, seededLookup } from './lookup-setup.js';
import { SERVICE_SETTINGS } from './service-statements.js';

const ROW = { id: '11', title: 'lookup of 1,000 mixed keys (half stored) over the seeded collections', unit: 'lookups/s', target: { minRatio: 0.5 } };
/** The absolute target for the server time of one lookup, reported in the notes. */
const TARGET_P50_MS = 50;

/**
 * Row 11: `POST /intel/lookup` with `scale.lookupKeys` keys, half of them stored somewhere in the
 * `scale.lookupCollections` seeded collections (`scale.lookupObjects` objects), with a key that reads
 * exactly those collections; 2 clients, each answer checked to hold one entry per key
 * and a match for every stored key. Baseline: as many raw `pg` workers running the service's statement
 * (LookupService's LOOKUP, verbatim) with the same parameters.
 */
export const row11: RowModule = {
  rows: [ROW],
  requires: ['POST /intel/lookup'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const data = await seededLookup(ctx);
    const clients = 2;
    const stored = Math.ceil(scale.lookupKeys / 2);
    let wrong = 0;
    const served = lookupLoad(
      ctx,
      data.token,
      data.keySets,
      (status, body) => {
        if (status !== 200) return;
        const results = JSON.parse(body) as { matches: unknown[] }[];
        const found = results.filter((result) => result.matches.length > 0).length;
        if (results.length !== scale.lookupKeys || found !== stored) wrong++;
      },
      clients,
    );
    const { LOOKUP_STATEMENT } = ctx.statements.lookup;
    let rawNext = 0;
    const raw = (seconds: number) =>
      dbLoad({
        pool: ctx.baselinePool,
        concurrency: clients,
        durationS: seconds,
        step: async ({ client }) => {
          const keys = data.keySets[rawNext++ % data.keySets.length];
          await client.query(
            LOOKUP_STATEMENT.text,
            LOOKUP_STATEMENT.parameters.values({
              types: keys.map((key) => key.type),
              values: keys.map((key) => key.value),
              readsAll: false,
              readable: data.resourceIds,
              collections: null,
              maxBytes: SERVICE_SETTINGS.pageMaxBytes,
              scoreAt: new Date().toISOString(),
            }),
          );
        },
      });
    const measured = await compareReads(
      ctx,
      { service: `POST /intel/lookup (${scale.lookupKeys} keys)`, baseline: 'raw pg: same lookup statement' },
      served,
      raw,
    );
    if (wrong > 0) throw new Error(`${wrong} lookups did not answer every key, or missed a stored one`);
    const p50 = measured.service.p50Ms ?? Infinity;
    return [
      finishRow(ROW, measured, [
        `${scale.lookupObjects.toLocaleString('en-US')} objects in ${scale.lookupCollections} collections, ${clients} concurrent clients`,
        `server time per lookup (p50 latency) < ${TARGET_P50_MS} ms: ${p50 < TARGET_P50_MS ? 'met' : 'missed'} (${p50.toFixed(1)} ms)`,
      ]),
    ];
  },
};
