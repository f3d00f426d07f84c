import type autocannon from 'autocannon';
import { parseLinks } from '../lib/api.js';
import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule, type RowResult } from '../lib/row.js';
import { createCollection } from './intel-setup.js';
import { benchObject } from './row3-object-add.js';
import { numberSeeded, seedObjects, seedTarget, settleTables } from './seed.js';
import { SERVICE_SETTINGS } from './service-statements.js';

/** The large collection rows 4 and 5 read: `scale.feedItems` objects and as many `Add` changes. */
export interface SeededFeed {
  name: string;
  collectionId: number;
  /** The changes cursor the first listing page gave BEFORE seeding: reading from it yields every change. */
  startCursor: string;
  /** Bearer token of a key with Read on the collection. */
  token: string;
}

/**
 * Seeds `scale.feedItems` new objects (row 3's objects, 1 KB contexts) through the service's batch statement
 * (seed.ts): the objects, their key rows and one `Add` change each, numbered by the service's sequencer. The
 * measured paths (reads) go through HTTP; loading 100k objects through it would take minutes.
 */
export async function seededFeed(ctx: RowContext): Promise<SeededFeed> {
  const cached = ctx.shared.get('seededFeed') as SeededFeed | undefined;
  if (cached) return cached;
  const collection = await createCollection(ctx, 'feed');
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: collection.resourceId, actions: ['Read'] }] });
  const token = await ctx.admin.withKey(key).token();
  const target = await seedTarget(ctx, collection.name);
  const prefix = `${ctx.runId}f`;
  await seedObjects(ctx, target, 1, ctx.scale.feedItems, (g) => {
    const object = benchObject(prefix, g, ctx.scale.contextBytes);
    return { type: 'DomainName', key: { type: 'DomainName', value: object.value }, contextJson: object.contextJson };
  });
  await numberSeeded(ctx, target);
  await settleTables(ctx);
  const feed = { name: collection.name, collectionId: target.collectionId, startCursor: target.startCursor, token };
  ctx.shared.set('seededFeed', feed);
  return feed;
}

/** What distinguishes the keyset reads of the seeded collection (rows 4, 5 and 15). */
export interface KeysetWalk {
  /** Path of the first page. */
  firstPath: string;
  /** Path of the page after one, from its answer; default `Link: rel="next"` verbatim, like the SDK. */
  nextPath?: (body: string, headers: Record<string, string | string[]>) => string | undefined;
  /** Request headers besides the feed's bearer token. */
  headers?: Record<string, string>;
  pagesPerWalk: number;
  /** The statement the service runs for the page after `position`, which the baseline runs verbatim. */
  statement: (position: number) => { text: string; values: unknown[] };
  /** The position the next page starts after, from a page's rows; 0 ends a walk (back to the start). */
  nextPosition: (positions: number[]) => number;
  serviceLabel: string;
  baselineLabel: string;
  /** What one walk reads, for the notes (`100000 changes`). */
  walked: string;
  /** What a page holds `scale.pageLimit` of, for the notes (`changes`, `objects`). */
  noun: string;
}

/** The walk of rows 4 and 5: a keyset statement of FEED_STATEMENTS (src/intel/object-statements.ts), `rowsPerPage` rows a page. */
export function feedStatement(ctx: RowContext, feed: SeededFeed, page: 'listPage' | 'changesAfter', rowsPerPage: number): KeysetWalk['statement'] {
  const { FEED_STATEMENTS } = ctx.statements.objects;
  return (after) => ({
    text: FEED_STATEMENTS[page],
    // The listing's rows show their scores at `scoreAt` (now), as the service's do.
    values: FEED_STATEMENTS.parameters[page].values({
      collectionId: feed.collectionId,
      after,
      limit: rowsPerPage,
      maxBytes: SERVICE_SETTINGS.pageMaxBytes,
      scoreAt: new Date().toISOString(),
    }),
  });
}

/**
 * The module of a row that walks the seeded collection (`walkOf` says how, once it is seeded), measured
 * by keysetWalkRow.
 */
export function keysetWalkModule(
  row: RowModule['rows'][number],
  route: string,
  walkOf: (ctx: RowContext, feed: SeededFeed) => KeysetWalk | Promise<KeysetWalk>,
): RowModule {
  return {
    rows: [row],
    requires: [route],
    async run(ctx) {
      const feed = await seededFeed(ctx);
      return [await keysetWalkRow(ctx, row, feed, await walkOf(ctx, feed))];
    },
  };
}

/**
 * `scale.readers` concurrent clients each walk the whole keyset through HTTP, every walk checked to take
 * exactly `pagesPerWalk` pages with a next page on all but the last; the baseline walks it with the same
 * statement through raw `pg`, page by page.
 */
async function keysetWalkRow(ctx: RowContext, row: RowModule['rows'][number], feed: SeededFeed, walkSpec: KeysetWalk): Promise<RowResult> {
  const { scale } = ctx;
  const { pagesPerWalk } = walkSpec;
  const nextPath = walkSpec.nextPath ?? ((_body, headers) => parseLinks(headers.link ?? headers.Link).next);
  let badWalks = 0;

  // One walk is one cycle of `pagesPerWalk` requests; autocannon keeps `context` for a whole cycle.
  const walk: autocannon.Request[] = Array.from({ length: pagesPerWalk }, (_, page) => ({
    method: 'GET',
    setupRequest: (request, context) => {
      const path = page === 0 ? walkSpec.firstPath : (context.next as string | undefined);
      if (!path) badWalks++;
      return { ...request, path: path ?? walkSpec.firstPath };
    },
    onResponse: (_status, body, context, headers) => {
      context.next = nextPath(body, headers);
      if ((page === pagesPerWalk - 1) === (context.next !== undefined)) badWalks++;
    },
  }));
  const served = (walks: number) =>
    httpLoad({
      baseUrl: ctx.service.url,
      connections: scale.readers,
      amount: scale.readers * walks * pagesPerWalk,
      headers: { Authorization: `Bearer ${feed.token}`, ...walkSpec.headers },
      requests: walk,
      // Bodies are kept only for a walk that reads its next page from them.
      keepBodies: walkSpec.nextPath !== undefined,
    }).done;

  const raw = (walks: number) => {
    const position = new Array<number>(scale.readers).fill(0);
    return dbLoad({
      pool: ctx.baselinePool,
      concurrency: scale.readers,
      amount: scale.readers * walks * pagesPerWalk,
      step: async ({ index, client }) => {
        const statement = walkSpec.statement(position[index]);
        const { rows } = await client.query(statement.text, statement.values);
        const positions = rows.filter((row: { position: string | null }) => row.position !== null).map((row: { position: string }) => Number(row.position));
        position[index] = walkSpec.nextPosition(positions);
      },
    });
  };

  const measured = await compare({
    rounds: scale.rounds,
    serviceLabel: walkSpec.serviceLabel,
    baselineLabel: walkSpec.baselineLabel,
    warmService: () => served(1),
    warmBaseline: () => raw(1),
    service: async () => ({ outcome: await served(scale.walks) }),
    baseline: async () => ({ outcome: await raw(scale.walks) }),
    serviceProbe: ctx.service.server.probe,
    cpu: ctx.cpu,
    sql: ctx.sqlStats,
    sqlParity: true,
  });
  if (badWalks > 0) throw new Error(`${badWalks} pages had a next page where none was expected, or lacked one`);
  return finishRow(row, measured, [
    `${walkSpec.walked}, ${pagesPerWalk} pages per walk, ${scale.readers} concurrent readers`,
    `≈ ${Math.round(measured.service.throughput * scale.pageLimit).toLocaleString('en-US')} ${walkSpec.noun}/s through the service`,
  ]);
}
