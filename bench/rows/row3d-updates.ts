import { dbLoad } from '../lib/load.js';
import { compare, finishRow, timedPhases, type RowContext, type RowModule } from '../lib/row.js';
import { numberPending, ROUTES, writeTargets } from './intel-setup.js';
import { benchObject, cycledObject, objectAdds } from './row3-object-add.js';
import { ROW_3C_THROUGHPUT } from './row3c-parallel-adds.js';
import { RAW_WRITE_ORIGIN } from './service-statements.js';

const ROW = {
  id: '3d',
  title: 'object add, updates of existing objects (new context), one collection (16 clients) vs unserialised updates',
  unit: 'objects/s',
  target: { minRatio: 0.5 },
};

/** Items per batch when seeding the objects both sides update. */
const SEED_BATCH = 500;

/**
 * Row 3d: `POST /intel/collections/{c}/objects` re-sending existing objects with a new context (each an
 * Update), `scale.connections` clients into ONE collection, cycling through `scale.updateObjects` objects.
 * Baseline: raw `pg`, same concurrency, running for each update the service's own statements (loaded
 * from the service build, see service-statements.ts): the key pre-check, then the update statement, each
 * autocommitted and unserialised, into a twin collection of as many objects. The ratio shows what the
 * service adds to an update, including whatever it serialises; the notes compare its throughput with
 * row 3c's (new objects).
 */
export const row3d: RowModule = {
  rows: [ROW],
  requires: [ROUTES.registerSchema, ROUTES.registerCollection, 'POST /intel/collections/{collection_id}/objects'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const { served, direct, directId, headers } = await writeTargets(ctx, 'upd', ['Read', 'Write']);
    const objects = scale.updateObjects;
    const prefix = { served: `${ctx.runId}u`, direct: `${ctx.runId}v` };
    for (const [collection, name] of [
      [served.name, prefix.served],
      [direct.name, prefix.direct],
    ]) {
      for (let first = 0; first < objects; first += SEED_BATCH) {
        const items = Array.from(
          { length: Math.min(SEED_BATCH, objects - first) },
          (_, i) => JSON.parse(benchObject(name, first + i, scale.contextBytes).body) as unknown,
        );
        await ctx.admin.request('POST', `/intel/collections/${collection}/objects/batch`, { json: items, expect: [200] });
      }
    }
    // Every request a new revision of the next object, so every add is an Update.
    let servedNext = 0;
    let directNext = 0;
    const post = (seconds: number) =>
      objectAdds(
        { baseUrl: ctx.service.url, path: `/intel/collections/${served.name}/objects`, headers },
        { connections: scale.connections, contextBytes: scale.contextBytes, prefix: prefix.served, seconds, pick: () => servedNext++, cycle: objects },
      );
    const {
      OBJECT_STATEMENTS: { findHits, update },
      findHitsParameters,
      WRITE_PARAMETERS,
    } = ctx.statements.objects;
    const raw = (seconds: number) =>
      dbLoad({
        pool: ctx.baselinePool,
        concurrency: scale.connections,
        durationS: seconds,
        step: async ({ client }) => {
          const n = directNext++;
          const object = cycledObject(prefix.direct, n, objects, scale.contextBytes);
          const hits = await client.query<{ id: string; keys: unknown }>({
            ...findHits,
            values: findHitsParameters(directId, [{ type: 'DomainName', value: object.value }], object.contextJson, { at: null, ttlSeconds: null }),
          });
          if (hits.rowCount !== 1) throw new Error(`object ${object.value} is not stored`);
          const [{ id, keys }] = hits.rows;
          const keysJson = JSON.stringify(keys);
          // An update of the context only: no new keys, no expiry, decided on the keys found.
          const written = await client.query({
            ...update,
            values: WRITE_PARAMETERS.update.values({
              collectionId: directId,
              objectId: id,
              keys: keysJson,
              context: object.contextJson,
              newKeys: '[]',
              expiresAt: null,
              ttlSeconds: null,
              decidedOnKeys: keysJson,
              // A native update naming no marking: the collection's defaultTLP, CLEAR.
              tlp: 0,
              ...RAW_WRITE_ORIGIN,
            }),
          });
          if (written.rowCount !== 1) throw new Error(`object ${object.value} was not updated`);
        },
      });
    // As in row 3: the baseline's records are numbered before each service phase, outside the measurement.
    const numberBaselineRecords = () => numberPending(ctx, direct.name);
    const result = await compare({
      rounds: scale.rounds,
      prepareService: numberBaselineRecords,
      serviceLabel: 'POST …/objects, update, one collection',
      baselineLabel: 'raw pg: same SQL, unserialised',
      ...timedPhases(post, raw, scale.warmupSeconds, scale.objectAddSeconds),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      sqlParity: true,
    });
    await numberBaselineRecords();
    const newObjects = ctx.shared.get(ROW_3C_THROUGHPUT) as number | undefined;
    const notes = [`${scale.connections} concurrent writers, one collection per side`, `${objects} objects per side`, `context ${scale.contextBytes} B`];
    if (newObjects) notes.push(`service at ${(result.service.throughput / newObjects).toFixed(2)} of row 3c's new objects/s`);
    return [finishRow(ROW, result, notes)];
  },
};
