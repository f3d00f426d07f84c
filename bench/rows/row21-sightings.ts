import { httpLoad, type LoadOutcome } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { ROUTES, writeTargets } from './intel-setup.js';
import { lookupLoad, seededLookup } from './lookup-setup.js';
import { batchAdds } from './row10-bulk-ingest.js';
import { SEED_CONTEXT, seededCollection, type SeedObject } from './seed.js';

const INGEST = {
  id: '21a',
  title: 'sightings: 100,000 in batches of 1,000 on 10,000 keys (8 clients), against bulk ingest of as many new objects',
  unit: 'items/s',
  target: { minRatio: 0.8 },
};
const LOOKUP = {
  id: '21b',
  title: 'lookup of 1,000 keys whose stored objects have sighting summaries, against the same lookup of objects never sighted',
  unit: 'lookups/s',
  target: { minRatio: 0.8 },
};

const CLIENTS = 8;
const BATCH = 1000;
/** Sources each sighted key of row 21b gets an item from (its summary counts them). */
const SOURCES_PER_KEY = 3;

/** Object `g` of the sighted collection: one domain name each. */
function sightedObject(g: number): SeedObject {
  return { type: 'DomainName', key: { type: 'DomainName', value: `s${g}.sighted.example` }, contextJson: SEED_CONTEXT };
}

/**
 * Row 21 (extensions §17): what sightings cost.
 *
 * 21a: `POST /intel/sightings`, 8 clients sending batches of 1,000 items (one `sighting` each, a source per
 * client) spread evenly over the 10,000 keys of a seeded collection, until 100,000 items are recorded per
 * round, every answer checked to say `Recorded` for every item. Baseline: row 10 as it stands, the same
 * service's `POST …/objects/batch` with row 10's clients (2: a batch holds its collection's writer lock
 * exclusively, so 8 clients into one collection only queue on it: a quick run measured 1.7 s of lock wait a batch)
 * sending batches of 1,000 new objects (row 10's objects, 1 KB context), 100,000 objects per round. Both
 * sides are the service.
 *
 * 21b: `POST /intel/lookup` of 1,000 keys over row 11's seeded collections, half of them stored, 2 clients.
 * Service: key sets whose stored keys were sighted (SOURCES_PER_KEY items each, so every found object's
 * summary is computed from several rows); baseline: key sets of the same sizes whose objects were never
 * sighted (the lookup as it answered before sightings existed: `sightings` null). Every answer is checked.
 */
export const row21: RowModule = {
  rows: [INGEST, LOOKUP],
  requires: [ROUTES.registerCollection, 'POST /intel/collections/{collection_id}/objects/batch', 'POST /intel/sightings', 'POST /intel/lookup'],
  async run(ctx: RowContext) {
    return [await sightingIngest(ctx), await lookupWithSummaries(ctx)];
  },
};

async function sightingIngest(ctx: RowContext) {
  const { scale } = ctx;
  // The quick scale proves the row runs; its figures mean nothing.
  const items = scale.quick ? 8_000 : 100_000;
  const keys = scale.quick ? 1_000 : 10_000;
  const batches = items / BATCH;
  const sighted = await seededCollection(ctx, 'sighted', 0, keys, sightedObject);
  const { key } = await ctx.admin.createKey({ permissions: [{ resource: sighted.resourceId, actions: ['Read'] }] });
  const sightingHeaders = { Authorization: `Bearer ${await ctx.admin.withKey(key).token()}`, 'Content-Type': 'application/json' };
  const { served, headers } = await writeTargets(ctx, 'sighting-ingest', ['Write']);

  let sent = 0;
  let notRecorded = 0;
  const bodyOf = (batch: number) =>
    JSON.stringify(
      Array.from({ length: BATCH }, (_, i) => ({
        type: 'DomainName',
        value: sightedObject((batch * BATCH + i) % keys).key.value,
        source: `bench/client-${batch % CLIENTS}`,
      })),
    );
  const sightings = (amount: number) =>
    httpLoad({
      baseUrl: ctx.service.url,
      connections: CLIENTS,
      amount,
      timeoutS: 120,
      keepBodies: true,
      headers: sightingHeaders,
      requests: [
        {
          method: 'POST',
          path: '/intel/sightings',
          setupRequest: (request) => ({ ...request, body: bodyOf(sent++) }),
          onResponse: (status, body) => {
            if (status === 200 && (JSON.parse(body) as { status: string }[]).some((result) => result.status !== 'Recorded')) notRecorded++;
          },
        },
      ],
    }).done;
  let objectBatches = 0;
  let incomplete = 0;
  const ingest = (amount: number) =>
    batchAdds(
      { baseUrl: ctx.service.url, path: `/intel/collections/${served.name}/objects/batch`, headers },
      {
        clients: scale.batchClients,
        size: BATCH,
        contextBytes: scale.contextBytes,
        prefix: `${ctx.runId}s`,
        amount,
        nextBatch: () => objectBatches++,
        incomplete: () => incomplete++,
      },
    );
  const units = (outcome: LoadOutcome) => ({ outcome, units: outcome.requests * BATCH });
  const measured = await compare({
    rounds: scale.rounds,
    serviceLabel: `POST /intel/sightings (${BATCH} items on ${keys.toLocaleString('en-US')} keys)`,
    baselineLabel: `POST …/objects/batch (${BATCH} new objects, ${scale.batchClients} clients: row 10)`,
    warmService: () => sightings(CLIENTS),
    warmBaseline: () => ingest(scale.batchClients),
    service: async () => units(await sightings(batches)),
    baseline: async () => units(await ingest(batches)),
    serviceProbe: ctx.service.server.probe,
    cpu: ctx.cpu,
    sql: ctx.sqlStats,
    bothSidesThroughService: true,
  });
  if (notRecorded > 0) throw new Error(`${notRecorded} sighting batches had an item not Recorded`);
  if (incomplete > 0) throw new Error(`${incomplete} batches did not report all ${BATCH} objects as Added`);
  return finishRow(INGEST, measured, [
    `${CLIENTS} sighting clients, ${scale.batchClients} ingest clients (row 10's: more only queue on the collection's writer lock), ${items.toLocaleString('en-US')} items (objects) per side per round, ${scale.rounds} rounds`,
    `sightings: one source per client, each of the ${keys.toLocaleString('en-US')} keys sighted ${items / keys} times per round; objects: context ${scale.contextBytes} B`,
  ]);
}

async function lookupWithSummaries(ctx: RowContext) {
  const { scale } = ctx;
  const data = await seededLookup(ctx);
  const stored = Math.ceil(scale.lookupKeys / 2);
  // Sets 0 and 1 are sighted, 2 and 3 never: same sizes, same collections, disjoint objects.
  const [withSightings, without] = [data.keySets.slice(0, 2), data.keySets.slice(2, 4)];
  const sighter = ctx.admin.withToken(data.token);
  const storedKeys = withSightings.flatMap((keys) => keys.filter((_, i) => i % 2 === 0));
  for (let from = 0; from < storedKeys.length * SOURCES_PER_KEY; from += 10_000) {
    const items = Array.from({ length: Math.min(10_000, storedKeys.length * SOURCES_PER_KEY - from) }, (_, i) => {
      const n = from + i;
      return { ...storedKeys[n % storedKeys.length], source: `bench/sensor-${Math.floor(n / storedKeys.length)}`, count: 1 + (n % 7) };
    });
    const answer = (await sighter.json('POST', '/intel/sightings', items)) as { status: string }[];
    if (answer.some((result) => result.status !== 'Recorded')) throw new Error('a seeded sighting was not Recorded');
  }

  let wrong = 0;
  const lookups = (sets: typeof withSightings, sightedSide: boolean) =>
    lookupLoad(ctx, data.token, sets, (status, body) => {
      if (status !== 200) return;
      const matches = (JSON.parse(body) as { matches: { sightings: unknown }[] }[]).flatMap((result) => result.matches);
      if (matches.length !== stored || matches.some((match) => (match.sightings !== null) !== sightedSide)) wrong++;
    });
  const served = lookups(withSightings, true);
  const plain = lookups(without, false);
  const measured = await compare({
    rounds: scale.cheapRounds,
    serviceLabel: `POST /intel/lookup (${scale.lookupKeys} keys, found objects sighted)`,
    baselineLabel: `POST /intel/lookup (${scale.lookupKeys} keys, found objects never sighted)`,
    warmService: () => served(scale.warmupSeconds),
    warmBaseline: () => plain(scale.warmupSeconds),
    service: async () => ({ outcome: await served(scale.cheapSeconds) }),
    baseline: async () => ({ outcome: await plain(scale.cheapSeconds) }),
    serviceProbe: ctx.service.server.probe,
    cpu: ctx.cpu,
    sql: ctx.sqlStats,
    bothSidesThroughService: true,
  });
  if (wrong > 0) throw new Error(`${wrong} lookups missed a stored key or had a summary where none (or none where one) was due`);
  return finishRow(LOOKUP, measured, [
    `${scale.lookupObjects.toLocaleString('en-US')} objects in ${scale.lookupCollections} collections (row 11's), 2 concurrent clients`,
    `${storedKeys.length.toLocaleString('en-US')} sighted keys, ${SOURCES_PER_KEY} sources each`,
  ]);
}
