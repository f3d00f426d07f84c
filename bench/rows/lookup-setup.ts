import { createHash } from 'node:crypto';
import { httpLoad, type LoadOutcome } from '../lib/load.js';
import { compare, type RowContext } from '../lib/row.js';
import { SEED_CONTEXT, seededCollection, type SeedObject } from './seed.js';

/** The IPv4 address `offset` addresses after `base` (dotted). */
function ipv4(base: number, offset: number): string {
  const n = (base + offset) >>> 0;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Object `g` of the lookup collections: hashes, domain names, URLs and IP addresses in turn. */
function mixedObject(g: number): SeedObject {
  const seed = `seed${g}`;
  const [type, key] = (
    [
      ['File', { type: 'MD5Hash', value: createHash('md5').update(seed).digest('hex') }],
      ['DomainName', { type: 'DomainName', value: `d${g}.lookup.example` }],
      ['URL', { type: 'URL', value: `https://u${g}.lookup.example/p` }],
      ['IPAddress', { type: 'IPAddress', value: ipv4(100 << 24, g) }],
      ['File', { type: 'SHA256Hash', value: createHash('sha256').update(seed).digest('hex') }],
    ] as const
  )[g % 5];
  return { type, key, contextJson: SEED_CONTEXT };
}

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
    const collection = await seededCollection(ctx, `lookup${c}`, c * perCollection, perCollection, mixedObject);
    names.push(collection.name);
    resourceIds.push(collection.resourceId);
    ids.push(collection.collectionId);
  }
  const { key } = await ctx.admin.createKey({ permissions: resourceIds.map((resource) => ({ resource, actions: ['Read'] })) });
  const token = await ctx.admin.withKey(key).token();

  const sets = 4;
  const half = Math.floor(scale.lookupKeys / 2);
  const present = (
    await ctx.setupPool.query(`SELECT key_type AS type, value FROM intel_object_key WHERE collection_id = ANY($1::int[]) ORDER BY random() LIMIT $2`, [
      ids,
      sets * half,
    ])
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

/**
 * Rows 11, 21 and 22: `POST /intel/lookup` of `keySets` in turn, as `token`, on `connections` keep-alive
 * connections, for a given number of seconds; `onResponse` checks each answer.
 */
export function lookupLoad(
  ctx: RowContext,
  token: string,
  keySets: readonly { type: string; value: string }[][],
  onResponse: (status: number, body: string) => void,
  connections = 2,
): (seconds: number) => Promise<LoadOutcome> {
  const bodies = keySets.map((keys) => JSON.stringify({ keys }));
  let next = 0;
  return (seconds) =>
    httpLoad({
      baseUrl: ctx.service.url,
      connections,
      durationS: seconds,
      keepBodies: true,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      requests: [{ method: 'POST', path: '/intel/lookup', setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }), onResponse }],
    }).done;
}

export interface NetworkData {
  name: string;
  collectionId: number;
  token: string;
}

/** Object `g` of the network collection: one IPv4 address every 16 addresses of 10.0.0.0/8. */
function addressObject(g: number): SeedObject {
  return { type: 'IPAddress', key: { type: 'IPAddress', value: ipv4(10 << 24, g * 16) }, contextJson: SEED_CONTEXT };
}

/** One collection of `scale.networkAddresses` IPAddress objects spread evenly over 10.0.0.0/8. */
export async function seededNetwork(ctx: RowContext): Promise<NetworkData> {
  const collection = await seededCollection(ctx, 'net', 0, ctx.scale.networkAddresses, addressObject);
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: collection.resourceId, actions: ['Read'] }] });
  return { name: collection.name, collectionId: collection.collectionId, token: await ctx.admin.withKey(key).token() };
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
