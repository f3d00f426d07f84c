import type { LoadOutcome } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { ROUTES, writeTargets } from './intel-setup.js';
import { objectAdds } from './row3-object-add.js';
import { batchAdds } from './row10-bulk-ingest.js';

const ADDS = { id: '19a', title: 'audited writes: row 3a (new objects) with auditing on, against AUDIT=off', unit: 'objects/s', target: { minRatio: 0.9 } };
const BATCHES = {
  id: '19b',
  title: 'audited writes: row 10 (batches of new objects) with auditing on, against AUDIT=off',
  unit: 'objects/s',
  target: { minRatio: 0.9 },
};

/**
 * Row 19: what the audit trail costs writes. The loads of rows 3a and 10, run against the measured service
 * (auditing on, its default) and against a second instance of the same build on the same database with
 * `AUDIT=off`, in alternating rounds; each side writes into a collection of its own. The second instance is
 * the baseline: the ratio is audited throughput over unaudited throughput.
 */
export const row19: RowModule = {
  rows: [ADDS, BATCHES],
  requires: [
    ROUTES.registerCollection,
    'POST /intel/collections/{collection_id}/objects',
    'POST /intel/collections/{collection_id}/objects/batch',
    'GET /auth/audit',
  ],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const unaudited = await ctx.startServiceVariant('audit-off', { AUDIT: 'off' });
    try {
      const on = await writeTargets(ctx, 'audited', ['Write']);
      const off = await writeTargets(ctx, 'unaudited', ['Write']);
      const sides = [
        { url: ctx.service.url, name: on.served.name, headers: on.headers, next: 0, batches: 0, prefix: `${ctx.runId}on` },
        { url: unaudited.url, name: off.served.name, headers: off.headers, next: 0, batches: 0, prefix: `${ctx.runId}off` },
      ];
      const [audited, plain] = sides;
      const add = (side: (typeof sides)[number], seconds: number) =>
        objectAdds(
          { baseUrl: side.url, path: `/intel/collections/${side.name}/objects`, headers: side.headers },
          { connections: scale.connections, contextBytes: scale.contextBytes, prefix: side.prefix, seconds, pick: () => side.next++ },
        );
      let incomplete = 0;
      const batch = (side: (typeof sides)[number], seconds: number) =>
        batchAdds(
          { baseUrl: side.url, path: `/intel/collections/${side.name}/objects/batch`, headers: side.headers },
          {
            clients: scale.batchClients,
            size: scale.batchItems,
            contextBytes: scale.contextBytes,
            prefix: `${side.prefix}b`,
            seconds,
            nextBatch: () => side.batches++,
            incomplete: () => incomplete++,
          },
        );
      const common = { rounds: scale.rounds, serviceProbe: ctx.service.server.probe, baselineProbe: unaudited.server.probe, cpu: ctx.cpu };
      const adds = await compare({
        ...common,
        serviceLabel: 'POST …/objects, new object (audited)',
        baselineLabel: 'the same on an instance with AUDIT=off',
        warmService: () => add(audited, scale.warmupSeconds),
        warmBaseline: () => add(plain, scale.warmupSeconds),
        service: async () => ({ outcome: await add(audited, scale.objectAddSeconds) }),
        baseline: async () => ({ outcome: await add(plain, scale.objectAddSeconds) }),
      });
      const units = (outcome: LoadOutcome) => ({ outcome, units: outcome.requests * scale.batchItems });
      const batches = await compare({
        ...common,
        serviceLabel: `POST …/objects/batch (${scale.batchItems} new objects, audited)`,
        baselineLabel: 'the same on an instance with AUDIT=off',
        warmService: () => batch(audited, scale.warmupSeconds),
        warmBaseline: () => batch(plain, scale.warmupSeconds),
        service: async () => units(await batch(audited, scale.bulkSeconds)),
        baseline: async () => units(await batch(plain, scale.bulkSeconds)),
      });
      if (incomplete > 0) throw new Error(`${incomplete} batches did not report all ${scale.batchItems} objects as Added`);
      const entries = await ctx.setupPool.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_entry WHERE target IN ($1, $2)`, [
        `intel/${on.served.name}`,
        `intel/${off.served.name}`,
      ]);
      const notes = [`audit entries written by the audited side: ${entries.rows[0].n} (none by the other)`];
      return [
        finishRow(ADDS, adds, [`${scale.connections} concurrent writers, one collection per side, context ${scale.contextBytes} B`, ...notes]),
        finishRow(BATCHES, batches, [`${scale.batchClients} concurrent clients, batches of ${scale.batchItems}`, ...notes]),
      ];
    } finally {
      await unaudited.server.stop();
    }
  },
};
