import type autocannon from 'autocannon';
import { parseLinks } from '../lib/api.js';
import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowModule } from '../lib/row.js';
import { seededFeed } from './feed-setup.js';
import { LIST_PAGE } from './service-sql.js';

const ROW = { id: '5', title: 'object listing of the seeded objects, limit 1000', unit: 'pages/s', target: { minRatio: 0.3 } };

/**
 * Row 5: `scale.readers` concurrent clients each list the whole collection (100k objects, 1 KB context
 * each) with `limit` 1000, following `Link: rel="next"` verbatim, from the first page (which also takes
 * the changes cursor) to the last (no next link). Baseline: the same readers running the service's keyset
 * statement (ObjectsRepository.listPage, verbatim, with limit + 1 rows like the service) through raw `pg`.
 */
export const row5: RowModule = {
  rows: [ROW],
  requires: ['GET /intel/collections/{collection_id}/objects'],
  async run(ctx) {
    const { scale } = ctx;
    const feed = await seededFeed(ctx);
    const limit = scale.pageLimit;
    const pagesPerWalk = Math.ceil(scale.feedItems / limit);
    const firstPath = `/intel/collections/${feed.name}/objects?limit=${limit}`;
    let badWalks = 0;

    const walk: autocannon.Request[] = Array.from({ length: pagesPerWalk }, (_, page) => ({
      method: 'GET',
      setupRequest: (request, context) => {
        const path = page === 0 ? firstPath : (context.next as string | undefined);
        if (!path) badWalks++;
        return { ...request, path: path ?? firstPath };
      },
      onResponse: (_status, _body, context, headers) => {
        context.next = parseLinks(headers.link ?? headers.Link).next;
        if ((page === pagesPerWalk - 1) === (context.next !== undefined)) badWalks++;
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
          const { rows } = await client.query(LIST_PAGE, [feed.collectionId, position[index], limit + 1]);
          const objects = rows.filter((row: { position: string | null }) => row.position !== null);
          // Like sliceAfterId: the (limit + 1)th row only says that a next page exists.
          position[index] = objects.length > limit ? Number(objects[limit - 1].position) : 0;
        },
      });
    };

    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: 'GET …/objects (limit 1000)',
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
    if (badWalks > 0) throw new Error(`${badWalks} listing pages had a next link where none was expected, or lacked one`);
    return [
      finishRow(ROW, measured, [
        `${scale.feedItems} objects, ${pagesPerWalk} pages per walk, ${scale.readers} concurrent readers`,
        `≈ ${Math.round(measured.service.throughput * limit).toLocaleString('en-US')} objects/s through the service`,
      ]),
    ];
  },
};
