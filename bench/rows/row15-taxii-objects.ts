import type autocannon from 'autocannon';
import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowModule } from '../lib/row.js';
import { seededFeed } from './feed-setup.js';
import { SERVICE_SETTINGS } from './service-statements.js';

const ROW = { id: '15', title: 'TAXII objects page of the seeded objects, limit 1000', unit: 'pages/s', target: { minRatio: 0.3 } };
const TAXII = 'application/taxii+json;version=2.1';
/** `next` comes first in the envelope; the page's body is read only for it. */
const NEXT = /"next":"([A-Za-z0-9_-]+)"/;

/**
 * Row 15: `scale.readers` concurrent TAXII clients each read the seeded collection (row 4/5's 100k objects)
 * as STIX 2.1 with `limit` 1000 (an indicator and its observable per object: 500 objects a page), following
 * `next` only, to the last page (`more: false`). Baseline: the same readers running the statement the service
 * runs for a page (ObjectVersionsService's statement with the default `match[version]=last`: 501 feed
 * positions) through raw `pg`, continuing after the 500th position.
 */
export const row15: RowModule = {
  rows: [ROW],
  requires: ['GET /taxii2/api/collections/{collection_id}/objects'],
  async run(ctx) {
    const { scale } = ctx;
    const feed = await seededFeed(ctx);
    const limit = scale.pageLimit;
    const [{ taxii_id: taxiiId }] = (await ctx.setupPool.query(`SELECT taxii_id FROM intel_collection WHERE id = $1`, [feed.collectionId]))
      .rows as { taxii_id: string }[];
    const objectsPath = `/taxii2/api/collections/${taxiiId}/objects/`;
    // The service's identity and extension definition, then two objects per seeded object.
    const pagesPerWalk = Math.ceil((2 + 2 * scale.feedItems) / limit);
    let badWalks = 0;

    const walk: autocannon.Request[] = Array.from({ length: pagesPerWalk }, (_, page) => ({
      method: 'GET',
      setupRequest: (request, context) => {
        const next = context.next as string | undefined;
        if (page > 0 && !next) badWalks++;
        return { ...request, path: page === 0 || !next ? `${objectsPath}?limit=${limit}` : `${objectsPath}?next=${next}` };
      },
      onResponse: (_status, body, context) => {
        context.next = NEXT.exec(body.slice(0, 4096))?.[1];
        if ((page === pagesPerWalk - 1) === (context.next !== undefined)) badWalks++;
      },
    }));
    const served = (walks: number) =>
      httpLoad({
        baseUrl: ctx.service.url,
        connections: scale.readers,
        amount: scale.readers * walks * pagesPerWalk,
        headers: { Authorization: `Bearer ${feed.token}`, Accept: TAXII },
        requests: walk,
        keepBodies: true,
      }).done;

    // As the service reads a page: about limit / 2 + 1 positions, the page ending after limit / 2 of them.
    const rowsPerPage = Math.ceil(limit / 2) + 1;
    const raw = (walks: number) => {
      const position = new Array<number>(scale.readers).fill(0);
      return dbLoad({
        pool: ctx.baselinePool,
        concurrency: scale.readers,
        amount: scale.readers * walks * pagesPerWalk,
        step: async ({ index, client }) => {
          // TAXII's default query (match[version]=last, no other filter), built by the service's own builder.
          const statement = ctx.statements.versions.versionsStatement(
            feed.collectionId,
            { afterSeq: position[index], versions: { first: false, last: true, at: [] }, limit: rowsPerPage },
            SERVICE_SETTINGS.pageMaxBytes,
          );
          const { rows } = await client.query(statement.text, statement.values);
          const found = rows.filter((row: { position: string | null }) => row.position !== null);
          position[index] = found.length === rowsPerPage ? Number(found[rowsPerPage - 2].position) : 0;
        },
      });
    };

    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: `GET …/taxii2/…/objects/ (limit ${limit})`,
      baselineLabel: 'raw pg: same versions SQL',
      warmService: () => served(1),
      warmBaseline: () => raw(1),
      service: async () => ({ outcome: await served(scale.walks) }),
      baseline: async () => ({ outcome: await raw(scale.walks) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      sqlParity: true,
    });
    if (badWalks > 0) throw new Error(`${badWalks} pages had a next where none was expected, or lacked one`);
    return [
      finishRow(ROW, measured, [
        `${scale.feedItems} objects as ${2 * scale.feedItems + 2} STIX objects, ${pagesPerWalk} pages per walk, ${scale.readers} concurrent readers`,
        `≈ ${Math.round(measured.service.throughput * limit).toLocaleString('en-US')} STIX objects/s through the service`,
      ]),
    ];
  },
};
