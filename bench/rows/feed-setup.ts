import type autocannon from 'autocannon';
import { cursorOf, parseLinks } from '../lib/api.js';
import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule, type RowResult } from '../lib/row.js';
import { createCollection } from './intel-setup.js';
import { benchObject } from './row3-object-add.js';
import { PAGE_MAX_BYTES } from './service-sql.js';

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
 * Seeds by direct SQL in the service's own tables (src/database/migrations/1763800002000-CreateObjects.ts),
 * exactly what `scale.feedItems` successful adds would have left: one intel_object row with its keys array
 * and 1 KB context, one intel_object_key row, one `Add` change with the object's state, its life (uid, first
 * add) and consecutive `seq` with its time (2 µs apart), and the collection's last_seq and last_seq_at moved — under a lock of the collection row, as the sequencer
 * (src/intel/change-sequencer.ts) moves it.
 * Loading 100k objects through HTTP would take minutes; the measured paths (reads) go through HTTP.
 */
export async function seededFeed(ctx: RowContext): Promise<SeededFeed> {
  const cached = ctx.shared.get('seededFeed') as SeededFeed | undefined;
  if (cached) return cached;
  const collection = await createCollection(ctx, 'feed');
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: collection.resourceId, actions: ['Read'] }] });
  const reader = ctx.admin.withKey(key);
  const token = await reader.token();
  const first = await reader.request('GET', `/intel/collections/${collection.name}/objects?limit=1`);
  const related = parseLinks(first.headers.get('link') ?? undefined).related;
  const startCursor = related && cursorOf(related);
  if (!startCursor) throw new Error('the first objects page carried no rel="related" changes cursor');

  const n = ctx.scale.feedItems;
  const sample = benchObject(`${ctx.runId}f`, 0, ctx.scale.contextBytes);
  // One template context (same size as row 3's); the key value makes every object distinct.
  const contextJson = sample.contextJson;
  const client = await ctx.setupPool.connect();
  let collectionId: number;
  try {
    await client.query('BEGIN');
    const locked = await client.query(`SELECT id, last_seq FROM intel_collection WHERE name = $1 FOR NO KEY UPDATE`, [collection.name]);
    collectionId = Number(locked.rows[0].id);
    const lastSeq = Number(locked.rows[0].last_seq);
    if (lastSeq !== 0) throw new Error(`the fresh collection ${collection.name} already has changes`);
    await client.query(
      `WITH obj AS (
         INSERT INTO intel_object (collection_id, type, keys, context)
         SELECT $1, 'DomainName', jsonb_build_array(jsonb_build_object('type', 'DomainName', 'value', 'o' || g || '-' || $3 || '.bench.example')), $4::jsonb
           FROM generate_series(1, $2::int) AS g
         RETURNING id, type, keys, context, uid, added_at
       ), new_keys AS (
         INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
         SELECT $1, 'DomainName', obj.keys -> 0 ->> 'value', obj.id FROM obj
       )
       INSERT INTO intel_change (collection_id, seq, seq_at, operation, object, object_uid, object_added_at)
       SELECT $1, row_number() OVER (ORDER BY obj.id), now() + (row_number() OVER (ORDER BY obj.id)) * interval '2 microseconds', 'Add',
              jsonb_build_object('type', obj.type, 'keys', obj.keys, 'context', obj.context), obj.uid, obj.added_at
         FROM obj`,
      [collectionId, n, `${ctx.runId}f`, contextJson],
    );
    await client.query(`UPDATE intel_collection SET last_seq = $2::int, last_seq_at = now() + $2::int * interval '2 microseconds' WHERE id = $1`, [collectionId, n]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
  // Fresh statistics and visibility map, as a settled production table would have; both sides profit alike.
  await ctx.setupPool.query('VACUUM ANALYZE intel_object, intel_object_key, intel_change, intel_collection');
  const feed = { name: collection.name, collectionId, startCursor, token };
  ctx.shared.set('seededFeed', feed);
  return feed;
}

/** What distinguishes the two keyset reads of the seeded collection (rows 4 and 5). */
export interface KeysetWalk {
  row: RowModule['rows'][number];
  feed: SeededFeed;
  /** Path of the first page; later pages follow `Link: rel="next"` verbatim, like the SDK. */
  firstPath: string;
  pagesPerWalk: number;
  /** The service's keyset statement, run by the baseline with ($1 collection id, $2 position, $3 rows). */
  sql: string;
  /** How many rows the service asks for per page (`limit`, or `limit + 1` where a row only signals more). */
  rowsPerPage: number;
  /** The position the next page starts after, from a page's rows; 0 ends a walk (back to the start). */
  nextPosition: (positions: number[]) => number;
  serviceLabel: string;
  /** What a page holds, for the notes (`changes`, `objects`). */
  noun: string;
}

/**
 * `scale.readers` concurrent clients each walk the whole keyset through HTTP, every walk checked to take
 * exactly `pagesPerWalk` pages with a next link on all but the last; the baseline walks it with the same
 * statement through raw `pg`, page by page.
 */
export async function keysetWalkRow(ctx: RowContext, walkSpec: KeysetWalk): Promise<RowResult> {
  const { scale } = ctx;
  const { feed, pagesPerWalk } = walkSpec;
  let badWalks = 0;

  // One walk is one cycle of `pagesPerWalk` requests; autocannon keeps `context` for a whole cycle.
  const walk: autocannon.Request[] = Array.from({ length: pagesPerWalk }, (_, page) => ({
    method: 'GET',
    setupRequest: (request, context) => {
      const path = page === 0 ? walkSpec.firstPath : (context.next as string | undefined);
      if (!path) badWalks++;
      return { ...request, path: path ?? walkSpec.firstPath };
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
        const { rows } = await client.query(walkSpec.sql, [feed.collectionId, position[index], walkSpec.rowsPerPage, PAGE_MAX_BYTES]);
        const positions = rows
          .filter((row: { position: string | null }) => row.position !== null)
          .map((row: { position: string }) => Number(row.position));
        position[index] = walkSpec.nextPosition(positions);
      },
    });
  };

  const measured = await compare({
    rounds: scale.rounds,
    serviceLabel: walkSpec.serviceLabel,
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
  if (badWalks > 0) throw new Error(`${badWalks} pages had a next link where none was expected, or lacked one`);
  return finishRow(walkSpec.row, measured, [
    `${scale.feedItems} ${walkSpec.noun}, ${pagesPerWalk} pages per walk, ${scale.readers} concurrent readers`,
    `≈ ${Math.round(measured.service.throughput * scale.pageLimit).toLocaleString('en-US')} ${walkSpec.noun}/s through the service`,
  ]);
}
