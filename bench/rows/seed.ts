import { randomUUID } from 'node:crypto';
import { cursorOf, parseLinks } from '../lib/api.js';
import type { RowContext } from '../lib/row.js';
import { createCollection } from './intel-setup.js';
import type { NewObjectsPlan } from './service-statements.js';

/**
 * One object to seed: its type, its one key (normalised as the service stores it), its context's JSON text and
 * its marking (a TLP rank, as a batch with `tlp=` writes it; TLP:CLEAR without).
 */
export interface SeedObject {
  type: string;
  key: { type: string; value: string };
  contextJson: string;
  tlp?: number;
}

/** Objects per batch statement: the service's own batches are smaller, but seeding is never timed. */
const SEED_BATCH = 10_000;

/** What seeding needs of a run: the service (with the admin key), its statements and a setup pool on its database. */
export type Seeder = Pick<RowContext, 'admin' | 'statements' | 'setupPool' | 'runId'>;

/** A fresh collection about to be seeded: the changes cursor its first listing page gave while it was empty. */
export interface SeedTarget {
  name: string;
  collectionId: number;
  /** Reading changes from it yields every change the seeding recorded. */
  startCursor: string;
}

/** The target for `seedObjects`, from the first listing page of the fresh collection `name`. */
export async function seedTarget(ctx: Seeder, name: string): Promise<SeedTarget> {
  const first = await ctx.admin.request('GET', `/intel/collections/${name}/objects?limit=1`);
  const related = parseLinks(first.headers.get('link') ?? undefined).related;
  const startCursor = related && cursorOf(related);
  if (!startCursor) throw new Error('the first objects page carried no rel="related" changes cursor');
  const { rows } = await ctx.setupPool.query<{ id: number }>(`SELECT id FROM intel_collection WHERE name = $1`, [name]);
  return { name, collectionId: rows[0].id, startCursor };
}

/**
 * A batch plan adding `objects`, all new (batch-plan.ts's shape for new objects: an insert and an Add each),
 * each marked as it says, else TLP:CLEAR as a batch naming no marking into a collection of the default `defaultTLP`;
 * no source claims them.
 */
function newObjectsPlan(objects: SeedObject[]): NewObjectsPlan {
  const none = { at: null, ttlSeconds: null } as const;
  const clear = 0;
  const inserts = objects.map((object) => ({
    type: object.type,
    keys: [object.key],
    contextJson: object.contextJson,
    expiry: none,
    uid: randomUUID(),
    tlp: object.tlp ?? clear,
    claimedTlp: null,
  }));
  return {
    inserts,
    updates: [],
    changes: inserts.map((insert) => ({
      operation: 'Add',
      type: insert.type,
      keys: insert.keys,
      contextJson: insert.contextJson,
      expiry: none,
      uid: insert.uid,
      addedAt: null,
      tlp: insert.tlp,
      wasTlp: null,
    })),
  };
}

/**
 * Writes objects `from` to `from + count - 1` (`objectAt(g)`, keys distinct from everything in the
 * collection) into `target` as the batch endpoint writes them: in transactions holding the collection's
 * exclusive writer lock, by the service's own batch statement (src/intel/batch/batch-statements.ts, loaded
 * from the build) with its parameter builder, so each object gets its key row and an `Add` change record
 * with its life, as a batch of new objects leaves them. The records are written unnumbered; positions are
 * the sequencer's business: `numberSeeded` has the service number them. The service's batch path
 * (validation, planning against stored objects, the report) is not run: every object is known to be new.
 */
export async function seedObjects(ctx: Seeder, target: SeedTarget, from: number, count: number, objectAt: (g: number) => SeedObject): Promise<void> {
  const { BATCH_STATEMENTS } = ctx.statements.batch;
  const origin = { via: 'batch', keyID: null, requestID: `bench-seed-${ctx.runId}`, source: null, reliability: 2 };
  for (let start = from; start < from + count; start += SEED_BATCH) {
    const objects = Array.from({ length: Math.min(SEED_BATCH, from + count - start) }, (_, i) => objectAt(start + i));
    const client = await ctx.setupPool.connect();
    try {
      await client.query('BEGIN');
      await client.query(BATCH_STATEMENTS.lock, [target.collectionId]);
      await client.query(BATCH_STATEMENTS.apply, BATCH_STATEMENTS.parameters(target.collectionId, newObjectsPlan(objects), origin));
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }
}

/**
 * Has the running service number the seeded records: a changes read that sees unnumbered records of its
 * collection waits for the sequencer's passes (ChangesService.caughtUp), which number every committed
 * record in id order, as they number a batch's after its commit.
 */
export async function numberSeeded(ctx: Seeder, target: SeedTarget): Promise<void> {
  await ctx.admin.request('GET', `/intel/collections/${target.name}/objects/changes?cursor=${target.startCursor}&limit=1`);
  const { rows } = await ctx.setupPool.query<{ pending: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM intel_change WHERE seq IS NULL AND collection_id = $1) AS pending',
    [target.collectionId],
  );
  if (rows[0].pending) throw new Error(`the service left records of ${target.name} unnumbered`);
}

/** Fresh statistics and visibility map after seeding, as a settled production table would have; both sides of a row profit alike. */
export async function settleTables(ctx: Seeder): Promise<void> {
  await ctx.setupPool.query('VACUUM ANALYZE intel_object, intel_object_key, intel_change, intel_collection');
}

/** The small context of the read rows' seeded objects (lookup, network search, export). */
export const SEED_CONTEXT = JSON.stringify({ score: 50, source: 'bench-seed' });

/**
 * A new collection (`label`) with objects `from` to `from + count - 1` of `objectAt`, seeded, numbered and
 * settled as above; its name, its auth resource and its id.
 */
export async function seededCollection(
  ctx: RowContext,
  label: string,
  from: number,
  count: number,
  objectAt: (g: number) => SeedObject,
): Promise<{ name: string; resourceId: number; collectionId: number }> {
  const collection = await createCollection(ctx, label);
  const target = await seedTarget(ctx, collection.name);
  await seedObjects(ctx, target, from, count, objectAt);
  await numberSeeded(ctx, target);
  await settleTables(ctx);
  return { ...collection, collectionId: target.collectionId };
}
