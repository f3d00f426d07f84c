import type { LoadOutcome } from '../lib/load.js';
import { compare, type RowContext } from '../lib/row.js';
import { createCollection } from './intel-setup.js';

/**
 * Inserts `count` objects with one key each into the collection `collectionId` by direct SQL in the service's
 * own tables (src/database/migrations): one intel_object row with its keys array and one intel_object_key
 * row per object, exactly the object state that many successful adds would have left. `keyOf` is an SQL
 * expression over `g` (the object number) yielding (object type, key type, normalised value) as three
 * columns `otype`, `ktype`, `value`. No change records: rows 11 and 12 never read the feed, and a million
 * of them would only slow the seeding. Seeding through HTTP would take minutes; the measured paths are HTTP.
 */
export async function seedObjects(ctx: RowContext, collectionId: number, from: number, count: number, keyOf: string): Promise<void> {
  await ctx.setupPool.query(
    `WITH obj AS (
       INSERT INTO intel_object (collection_id, type, keys, context)
       SELECT $1, k.otype, jsonb_build_array(jsonb_build_object('type', k.ktype, 'value', k.value)), '{"score": 50, "source": "bench-seed"}'::jsonb
         FROM generate_series($2::bigint, $2::bigint + $3::bigint - 1) AS g, LATERAL (${keyOf}) AS k(otype, ktype, value)
       RETURNING id, keys
     )
     INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
     SELECT $1, keys -> 0 ->> 'type', keys -> 0 ->> 'value', id FROM obj`,
    [collectionId, from, count],
  );
}

/** Object `g` of the lookup collections: hashes, domain names, URLs and IP addresses in turn. */
const MIXED_KEY = `
  SELECT CASE g % 5 WHEN 0 THEN 'File' WHEN 1 THEN 'DomainName' WHEN 2 THEN 'URL' WHEN 3 THEN 'IPAddress' ELSE 'File' END,
         CASE g % 5 WHEN 0 THEN 'MD5Hash' WHEN 1 THEN 'DomainName' WHEN 2 THEN 'URL' WHEN 3 THEN 'IPAddress' ELSE 'SHA256Hash' END,
         CASE g % 5
           WHEN 0 THEN md5('seed' || g)
           WHEN 1 THEN 'd' || g || '.lookup.example'
           WHEN 2 THEN 'https://u' || g || '.lookup.example/p'
           WHEN 3 THEN host('100.0.0.0'::inet + g)
           ELSE encode(sha256(('seed' || g)::bytea), 'hex')
         END`;

export interface LookupData {
  names: string[];
  resourceIds: number[];
  /** Bearer token of a key with Read on exactly the lookup collections. */
  token: string;
  /** Key sets of `scale.lookupKeys` keys, half of them stored (spread over the collections), half not. */
  keySets: { type: string; value: string }[][];
}

/** `scale.lookupObjects` objects over `scale.lookupCollections` collections, seeded once per run. */
export async function seededLookup(ctx: RowContext): Promise<LookupData> {
  const cached = ctx.shared.get('seededLookup') as LookupData | undefined;
  if (cached) return cached;
  const { scale } = ctx;
  const perCollection = Math.floor(scale.lookupObjects / scale.lookupCollections);
  const names: string[] = [];
  const resourceIds: number[] = [];
  const ids: number[] = [];
  for (let c = 0; c < scale.lookupCollections; c++) {
    const collection = await createCollection(ctx, `lookup${c}`);
    names.push(collection.name);
    resourceIds.push(collection.resourceId);
    const id = ((await ctx.setupPool.query(`SELECT id FROM intel_collection WHERE name = $1`, [collection.name])).rows[0] as { id: number }).id;
    ids.push(id);
    await seedObjects(ctx, id, c * perCollection, perCollection, MIXED_KEY);
  }
  await ctx.setupPool.query('VACUUM ANALYZE intel_object, intel_object_key, intel_collection');
  const { key } = await ctx.admin.createKey({ permissions: resourceIds.map((resource) => ({ resource, actions: ['Read'] })) });
  const token = await ctx.admin.withKey(key).token();

  const sets = 4;
  const half = Math.floor(scale.lookupKeys / 2);
  const present = (
    await ctx.setupPool.query(
      `SELECT key_type AS type, value FROM intel_object_key WHERE collection_id = ANY($1::int[]) ORDER BY random() LIMIT $2`,
      [ids, sets * half],
    )
  ).rows as { type: string; value: string }[];
  if (present.length < sets * half) throw new Error(`sampled ${present.length} stored keys, ${sets * half} needed`);
  const absent = (n: number) => {
    const kinds = [
      { type: 'MD5Hash', value: n.toString(16).padStart(32, 'f') },
      { type: 'DomainName', value: `absent${n}.lookup.example` },
      { type: 'URL', value: `https://absent${n}.lookup.example/p` },
      { type: 'IPAddress', value: `192.0.${(n >> 8) & 255}.${n & 255}` },
      { type: 'SHA256Hash', value: n.toString(16).padStart(64, 'e') },
    ];
    return kinds[n % kinds.length];
  };
  const keySets = Array.from({ length: sets }, (_, s) =>
    Array.from({ length: scale.lookupKeys }, (_, i) => (i % 2 === 0 ? present[s * half + i / 2] : absent(s * scale.lookupKeys + i)) ?? absent(i)),
  );
  const data = { names, resourceIds, token, keySets };
  ctx.shared.set('seededLookup', data);
  return data;
}

export interface NetworkData {
  name: string;
  collectionId: number;
  token: string;
}

/** Object `g` of the network collection: one IPv4 address every 16 addresses of 10.0.0.0/8. */
const ADDRESS_KEY = `SELECT 'IPAddress', 'IPAddress', host('10.0.0.0'::inet + g * 16)`;

/** One collection of `scale.networkAddresses` IPAddress objects spread evenly over 10.0.0.0/8. */
export async function seededNetwork(ctx: RowContext): Promise<NetworkData> {
  const collection = await createCollection(ctx, 'net');
  const collectionId = ((await ctx.setupPool.query(`SELECT id FROM intel_collection WHERE name = $1`, [collection.name])).rows[0] as { id: number }).id;
  const step = 250_000;
  for (let from = 0; from < ctx.scale.networkAddresses; from += step) {
    await seedObjects(ctx, collectionId, from, Math.min(step, ctx.scale.networkAddresses - from), ADDRESS_KEY);
  }
  await ctx.setupPool.query('VACUUM ANALYZE intel_object, intel_object_key');
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: collection.resourceId, actions: ['Read'] }] });
  return { name: collection.name, collectionId, token: await ctx.admin.withKey(key).token() };
}

/**
 * Rows 11 and 12: the service's read against the same statement through raw `pg`, both warmed, in the
 * cheap rows' rounds, with the statements' parity checked (the baseline must run what the service runs).
 */
export function compareReads(
  ctx: RowContext,
  labels: { service: string; baseline: string },
  served: (seconds: number) => Promise<LoadOutcome>,
  raw: (seconds: number) => Promise<LoadOutcome>,
) {
  const { scale } = ctx;
  return compare({
    rounds: scale.cheapRounds,
    serviceLabel: labels.service,
    baselineLabel: labels.baseline,
    warmService: () => served(scale.warmupSeconds),
    warmBaseline: () => raw(scale.warmupSeconds),
    service: async () => ({ outcome: await served(scale.cheapSeconds) }),
    baseline: async () => ({ outcome: await raw(scale.cheapSeconds) }),
    serviceProbe: ctx.service.server.probe,
    cpu: ctx.cpu,
    sql: ctx.sqlStats,
    sqlParity: true,
  });
}
