import type { RowContext } from '../lib/row.js';

/** Built-in resource ids (decisions §3). */
export const RESOURCE = { auth: 1, intel: 2, insight: 3, filebox: 4, tasks: 5, taskQueue: 6 } as const;

export const ROUTES = {
  registerSchema: 'POST /intel/schemas',
  registerCollection: 'POST /intel/collections',
  viewCollection: 'GET /intel/collections/{collectionName}',
  addObject: 'POST /intel/collections/{collectionName}/objects',
  listObjects: 'GET /intel/collections/{collectionName}/objects',
  changes: 'GET /intel/collections/{collectionName}/objects/changes',
};

/**
 * The intel schema every bench collection uses: the whole object `{type, keys, context}` is checked
 * (decisions §6), with a few typed context attributes like a real feed schema and extra attributes allowed.
 */
export function benchSchema(schemaID: string): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    schemaID,
    title: 'Bench indicators',
    description: 'Schema of the benchmark collections',
    type: 'object',
    required: ['type', 'keys', 'context'],
    properties: {
      type: { enum: ['File', 'DomainName', 'URL', 'IPAddress', 'IPNetwork'] },
      keys: { type: 'array', minItems: 1 },
      context: {
        type: 'object',
        properties: {
          score: { type: 'integer', minimum: 0, maximum: 100 },
          source: { type: 'string', maxLength: 200 },
          tags: { type: 'array', items: { type: 'string' } },
          note: { type: 'string' },
        },
      },
    },
  };
}

/** The route templates in the OpenAPI document may name the collection parameter either way. */
export function hasRoute(routes: Set<string>, route: string): boolean {
  return routes.has(route) || routes.has(route.replace('{collectionName}', '{collection_id}'));
}

/** Registers (once per run) the bench's intel schema; returns its id. */
export async function ensureIntelSchema(ctx: RowContext): Promise<string> {
  const existing = ctx.shared.get('intelSchemaID') as string | undefined;
  if (existing) return existing;
  const schemaID = `bench-${ctx.runId}`;
  await ctx.admin.request('POST', '/intel/schemas', { json: benchSchema(schemaID) });
  ctx.shared.set('intelSchemaID', schemaID);
  return schemaID;
}

/** A registered collection: its name and the id of its auth resource. */
type Collection = { name: string; resourceId: number };

/** Registers a collection and returns its name and the id of its auth resource. */
export async function createCollection(ctx: RowContext, label: string): Promise<Collection> {
  const schemaID = await ensureIntelSchema(ctx);
  const name = `bench-${label}-${ctx.runId}`;
  await ctx.admin.request('POST', '/intel/collections', { json: { name, schemaID } });
  const resourceId = await ctx.admin.childResourceId(RESOURCE.intel, name);
  return { name, resourceId };
}

/**
 * Numbers the change records waiting in `collection` (a first listing page numbers them). Records written
 * past the service (by a baseline or a floor) wait for its sequencer, which numbers every collection's: the
 * write rows call this outside their measured phases, so that a service phase pays only for its own.
 */
export async function numberPending(ctx: RowContext, collection: string): Promise<void> {
  await ctx.admin.request('GET', `/intel/collections/${collection}/objects?limit=1`);
}

/**
 * What the write rows (3, 3c, 10) need: a collection the service writes (with JSON headers carrying a
 * bearer token allowed `actions` on it) and a twin collection of the same schema that the raw baseline
 * writes directly (its id), so both sides write into tables of the same size.
 */
export async function writeTargets(
  ctx: RowContext,
  label: string,
  actions: string[],
): Promise<{ served: Collection; direct: Collection; directId: number; headers: Record<string, string> }> {
  const served = await createCollection(ctx, label);
  const direct = await createCollection(ctx, `${label}-raw`);
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: served.resourceId, actions }] });
  const token = await ctx.admin.withKey(key).token();
  const rows = await ctx.setupPool.query(`SELECT id FROM intel_collection WHERE name = $1`, [direct.name]);
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  return { served, direct, directId: (rows.rows[0] as { id: number }).id, headers };
}
