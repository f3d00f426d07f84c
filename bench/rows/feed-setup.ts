import { cursorOf, parseLinks } from '../lib/api.js';
import type { RowContext } from '../lib/row.js';
import { createCollection } from './intel-setup.js';
import { benchObject } from './row3-object-add.js';

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
 * and 1 KB context, one intel_object_key row, one `Add` change with the object's state and consecutive
 * `seq`, and the collection's last_seq moved — all under the collection's feed lock, like a writer.
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
         RETURNING id, type, keys, context
       ), new_keys AS (
         INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
         SELECT $1, 'DomainName', obj.keys -> 0 ->> 'value', obj.id FROM obj
       )
       INSERT INTO intel_change (collection_id, seq, operation, object)
       SELECT $1, row_number() OVER (ORDER BY obj.id), 'Add', jsonb_build_object('type', obj.type, 'keys', obj.keys, 'context', obj.context)
         FROM obj`,
      [collectionId, n, `${ctx.runId}f`, contextJson],
    );
    await client.query(`UPDATE intel_collection SET last_seq = $2 WHERE id = $1`, [collectionId, n]);
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
