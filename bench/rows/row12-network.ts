import { dbLoad, httpLoad } from '../lib/load.js';
import { finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { compareReads, seededNetwork } from './lookup-setup.js';
import { SERVICE_SETTINGS } from './service-statements.js';

const ROW = { id: '12', title: 'network search within a /16 over the seeded addresses, limit 1000', unit: 'req/s', target: {} };

/**
 * Row 12: `GET …/objects/network?within=10.<n>.0.0/16&limit=1000` over one collection of
 * `scale.networkAddresses` addresses spread evenly over 10.0.0.0/8 (4,096 per /16 at full scale), cycling
 * through the /16s that hold addresses, 2 clients; each answer checked to be a full first page. Baseline:
 * as many raw `pg` workers running the service's statement (NETWORK_SEARCHES.within, verbatim) with the
 * same parameters. Report only: the issue sets no target.
 */
export const row12: RowModule = {
  rows: [ROW],
  requires: ['GET /intel/collections/{collection_id}/objects/network'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const data = await seededNetwork(ctx);
    const clients = 2;
    const limit = scale.pageLimit;
    // /16s that hold at least a page of addresses (one address every 16: 4,096 per /16).
    const blocks = Math.max(1, Math.floor((scale.networkAddresses * 16) / 65536));
    const pageSize = Math.min(limit, scale.networkAddresses);
    let next = 0;
    let wrong = 0;
    const served = (seconds: number) =>
      httpLoad({
        baseUrl: ctx.service.url,
        connections: clients,
        durationS: seconds,
        keepBodies: true,
        headers: { Authorization: `Bearer ${data.token}` },
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({
              ...request,
              path: `/intel/collections/${data.name}/objects/network?within=10.${next++ % blocks}.0.0/16&limit=${limit}`,
            }),
            onResponse: (status, body) => {
              if (status === 200 && (JSON.parse(body) as unknown[]).length !== pageSize) wrong++;
            },
          },
        ],
      }).done;
    const { NETWORK_SEARCHES } = ctx.statements.network;
    let rawNext = 0;
    const raw = (seconds: number) =>
      dbLoad({
        pool: ctx.baselinePool,
        concurrency: clients,
        durationS: seconds,
        step: async ({ client }) => {
          await client.query(
            NETWORK_SEARCHES.within,
            NETWORK_SEARCHES.parameters.values({
              collectionId: data.collectionId,
              network: `10.${rawNext++ % blocks}.0.0/16`,
              afterId: 0,
              limit: limit + 1,
              maxBytes: SERVICE_SETTINGS.pageMaxBytes,
            }),
          );
        },
      });
    const measured = await compareReads(ctx, { service: 'GET …/objects/network?within=<a /16>', baseline: 'raw pg: same search statement' }, served, raw);
    if (wrong > 0) throw new Error(`${wrong} searches did not answer a full first page`);
    return [
      finishRow(ROW, measured, [
        `${scale.networkAddresses.toLocaleString('en-US')} addresses in one collection, ${Math.min(4096, scale.networkAddresses)} per /16 searched, first page of ${limit}, ${clients} clients`,
      ]),
    ];
  },
};
