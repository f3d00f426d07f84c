import type autocannon from 'autocannon';
import { parseLinks } from '../lib/api.js';
import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowModule } from '../lib/row.js';
import { seededFeed } from './feed-setup.js';
import { CHANGES_AFTER } from './service-sql.js';

const ROW = { id: '4', title: 'change feed read of the seeded changes, limit 1000', unit: 'pages/s', target: { minRatio: 0.3 } };

/**
 * Row 4: `scale.readers` concurrent clients each read the whole change feed (100k `Add` changes) from the
 * cursor the collection gave before it was filled, following `Link: rel="next"` verbatim like the SDK,
 * `limit` 1000, until the empty page without a next link. Baseline: the same number of readers running
 * the service's keyset statement (ObjectsRepository.changesAfter, verbatim) page by page through raw `pg`.
 * Every walk is checked to take exactly the expected number of pages.
 */
export const row4: RowModule = {
  rows: [ROW],
  requires: ['GET /intel/collections/{collection_id}/objects/changes'],
  async run(ctx) {
    const { scale } = ctx;
    const feed = await seededFeed(ctx);
    const limit = scale.pageLimit;
    // Full pages, then one empty page (the only page without a next link, wire-contract §3.2).
    const pagesPerWalk = Math.ceil(scale.feedItems / limit) + 1;
    const firstPath = `/intel/collections/${feed.name}/objects/changes?cursor=${feed.startCursor}&limit=${limit}`;
    let badWalks = 0;

    // One walk is one cycle of `pagesPerWalk` requests; autocannon keeps `context` for a whole cycle.
    const walk: autocannon.Request[] = Array.from({ length: pagesPerWalk }, (_, page) => ({
      method: 'GET',
      setupRequest: (request, context) => {
        const path = page === 0 ? firstPath : (context.next as string | undefined);
        if (!path) badWalks++;
        return { ...request, path: path ?? firstPath };
      },
      onResponse: (_status, _body, context, headers) => {
        context.next = parseLinks(headers.link ?? headers.Link).next;
        const last = page === pagesPerWalk - 1;
        if (last === (context.next !== undefined)) badWalks++;
      },
    }));
    const served = (walks: number) =>
      httpLoad({
        baseUrl: ctx.service.url,
        connections: scale.readers,
        amount: scale.readers * walks * pagesPerWalk,
        headers: { Authorization: `Bearer ${feed.token}` },
        requests: walk,
      }).done;

    const raw = (walks: number) => {
      const position = new Array<number>(scale.readers).fill(0);
      return dbLoad({
        pool: ctx.baselinePool,
        concurrency: scale.readers,
        amount: scale.readers * walks * pagesPerWalk,
        step: async ({ index, client }) => {
          const { rows } = await client.query(CHANGES_AFTER, [feed.collectionId, position[index], limit]);
          const changes = rows.filter((row: { position: string | null }) => row.position !== null);
          position[index] = changes.length === 0 ? 0 : Number(changes[changes.length - 1].position);
        },
      });
    };

    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: 'GET …/objects/changes (limit 1000)',
      baselineLabel: 'raw pg: same keyset SQL',
      warmService: () => served(1),
      warmBaseline: () => raw(1),
      service: async () => ({ outcome: await served(scale.walks) }),
      baseline: async () => ({ outcome: await raw(scale.walks) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      sqlParity: true,
    });
    if (badWalks > 0) throw new Error(`${badWalks} feed pages had a next link where none was expected, or lacked one`);
    return [
      finishRow(ROW, measured, [
        `${scale.feedItems} changes, ${pagesPerWalk} pages per walk, ${scale.readers} concurrent readers`,
        `≈ ${Math.round(measured.service.throughput * limit).toLocaleString('en-US')} changes/s through the service`,
      ]),
    ];
  },
};
