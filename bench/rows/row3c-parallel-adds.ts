import { dbLoad } from '../lib/load.js';
import { compare, finishRow, floorSide, timedPhases, type RowContext, type RowModule } from '../lib/row.js';
import { createCollection, numberPending, ROUTES, writeTargets } from './intel-setup.js';
import { benchObject, objectAdds } from './row3-object-add.js';

const ROW = {
  id: '3c',
  title: 'object add, new objects, one collection (16 clients) vs unserialised inserts',
  unit: 'objects/s',
  target: { minRatio: 0.5 },
};
const FLOOR = {
  id: '3cf',
  title: "stack floor of 3c: the bare framework + pg running the service's add statements, one collection",
  unit: 'objects/s',
  target: {},
};

/** ctx.shared key of row 3c's service throughput, which row 3d compares its updates with. */
export const ROW_3C_THROUGHPUT = 'row3c.serviceThroughput';

/**
 * A true raw baseline, not a service statement (no parity check): what a write to one collection costs at the least: the object, its key row and its change record in
 * one autocommitted statement, with nothing that makes two writers of the collection wait for each
 * other (the change record's position is a number the client hands out). Only the columns every
 * version of the schema has are named, so the same statement measures the design before and after the
 * feed was renumbered by a sequencer. It writes its positions itself, into a collection only it writes and the
 * service never reads (no numbering pass finds its records: they are numbered already).
 * $1 collection id, $2 type, $3 keys JSON, $4 context JSON, $5 position.
 */
const RAW_UNSERIALISED_INSERT = `
    WITH obj AS (
      INSERT INTO intel_object (collection_id, type, keys, context) VALUES ($1::int, $2::text, $3::jsonb, $4::jsonb)
      RETURNING id, type, keys, context
    ),
    new_keys AS (
      INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
      SELECT $1::int, k.type, k.value, obj.id FROM obj, jsonb_to_recordset($3::jsonb) AS k(type text, value text)
    )
    INSERT INTO intel_change (collection_id, seq, operation, object)
    SELECT $1::int, $5::bigint, 'Add', jsonb_build_object('type', obj.type, 'keys', obj.keys, 'context', obj.context) FROM obj`;

/**
 * Row 3c: `POST /intel/collections/{c}/objects`, a new object per request, `scale.connections` clients
 * into ONE collection: how far the service's writers of a collection commit in parallel. Baseline: raw
 * `pg`, same concurrency, inserting the same rows per object with no serialisation at all (above), so
 * the ratio is bounded by whatever the service serialises (a collection lock held through each commit
 * caps it near the cost of one WAL flush per object) and by its per-request work (row 3a's ratio).
 * 3cf: the stack floor (bench/floor/) adding new objects into one collection with the service's own add
 * statements (pre-check, insert), against the same baseline: the best 3c ratio possible on that stack.
 */
export const row3c: RowModule = {
  rows: [ROW, FLOOR],
  requires: [ROUTES.registerSchema, ROUTES.registerCollection, 'POST /intel/collections/{collection_id}/objects'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const { served, directId, headers } = await writeTargets(ctx, 'par', ['Read', 'Write']);
    // The floor's collection of its own: its records are numbered by the sequencer, the baseline's carry
    // their positions already.
    const floorCollection = await createCollection(ctx, 'par-floor');
    const floorId = ((await ctx.setupPool.query(`SELECT id FROM intel_collection WHERE name = $1`, [floorCollection.name])).rows[0] as { id: number }).id;
    let servedNext = 0;
    let directNext = 0;
    let floorNext = 0;
    const postTo = (baseUrl: string, path: string, prefix: string, seconds: number, pick: () => number) =>
      objectAdds({ baseUrl, path, headers }, { connections: scale.connections, contextBytes: scale.contextBytes, prefix, seconds, pick });
    const post = (seconds: number) => postTo(ctx.service.url, `/intel/collections/${served.name}/objects`, `${ctx.runId}p`, seconds, () => servedNext++);
    const floorPost = (seconds: number) => postTo(ctx.floorServer.url, `/intel/collections/${floorId}/objects`, `${ctx.runId}g`, seconds, () => floorNext++);
    const raw = (seconds: number) =>
      dbLoad({
        pool: ctx.baselinePool,
        concurrency: scale.connections,
        durationS: seconds,
        step: async ({ client }) => {
          const n = directNext++;
          const object = benchObject(`${ctx.runId}q`, n, scale.contextBytes);
          // Prepared, like the service's own statements of a single add.
          await client.query({
            name: 'bench_unserialised_insert',
            text: RAW_UNSERIALISED_INSERT,
            values: [directId, 'DomainName', object.keysJson, object.contextJson, n + 1],
          });
        },
      });
    const result = await compare({
      rounds: scale.rounds,
      serviceLabel: 'POST …/objects, new object, one collection',
      baselineLabel: 'raw pg: same rows, no serialisation',
      ...timedPhases(post, raw, scale.warmupSeconds, scale.objectAddSeconds),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
    });
    ctx.shared.set(ROW_3C_THROUGHPUT, result.service.throughput);
    const floor = await compare({
      rounds: scale.rounds,
      serviceLabel: `${ctx.floorName} + pg: same add statements, one collection`,
      baselineLabel: 'raw pg: same rows, no serialisation',
      ...timedPhases(floorPost, raw, scale.warmupSeconds, scale.objectAddSeconds),
      ...floorSide(ctx),
    });
    // The floor's records wait for a pass, numbered outside any measured phase.
    await numberPending(ctx, floorCollection.name);
    const notes = [`${scale.connections} concurrent writers, one collection per side`, `context ${scale.contextBytes} B`];
    return [
      finishRow(ROW, result, [...notes, `service at ${(result.service.throughput / floor.service.throughput).toFixed(2)} of the floor (3cf)`]),
      finishRow(FLOOR, floor, notes),
    ];
  },
};
