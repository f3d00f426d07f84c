import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { ROUTES, writeTargets } from './intel-setup.js';
import { benchObject } from './row3-object-add.js';

const ROW = {
  id: '3c',
  title: 'object add, new objects, one collection (16 clients) vs unserialised inserts',
  unit: 'objects/s',
  target: { minRatio: 0.5 },
};

/**
 * What a write to one collection costs at the least: the object, its key row and its change record in
 * one autocommitted statement, with nothing that makes two writers of the collection wait for each
 * other (the change record's position is a number the client hands out). Only the columns every
 * version of the schema has are named, so the same statement measures the design before and after the
 * feed was renumbered by a sequencer. $1 collection id, $2 type, $3 keys JSON, $4 context JSON, $5 position.
 */
const UNSERIALISED_INSERT = `
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
 */
export const row3c: RowModule = {
  rows: [ROW],
  requires: [ROUTES.registerSchema, ROUTES.registerCollection, 'POST /intel/collections/{collection_id}/objects'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const { served, directId, headers } = await writeTargets(ctx, 'par', ['Read', 'Write']);
    const path = `/intel/collections/${served.name}/objects`;
    let servedNext = 0;
    let directNext = 0;
    const post = (seconds: number) =>
      httpLoad({
        baseUrl: ctx.service.url,
        connections: scale.connections,
        durationS: seconds,
        headers,
        requests: [
          {
            method: 'POST',
            path,
            setupRequest: (request) => ({ ...request, body: benchObject(`${ctx.runId}p`, servedNext++, scale.contextBytes).body }),
          },
        ],
      }).done;
    const raw = (seconds: number) =>
      dbLoad({
        pool: ctx.baselinePool,
        concurrency: scale.connections,
        durationS: seconds,
        step: async ({ client }) => {
          const n = directNext++;
          const object = benchObject(`${ctx.runId}q`, n, scale.contextBytes);
          // Prepared, like the service's own statements of a single add.
          await client.query({ name: 'bench_unserialised_insert', text: UNSERIALISED_INSERT, values: [directId, 'DomainName', object.keysJson, object.contextJson, n + 1] });
        },
      });
    const result = await compare({
      rounds: scale.rounds,
      serviceLabel: 'POST …/objects, new object, one collection',
      baselineLabel: 'raw pg: same rows, no serialisation',
      warmService: () => post(scale.warmupSeconds),
      warmBaseline: () => raw(scale.warmupSeconds),
      service: async () => ({ outcome: await post(scale.objectAddSeconds) }),
      baseline: async () => ({ outcome: await raw(scale.objectAddSeconds) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
    });
    return [finishRow(ROW, result, [`${scale.connections} concurrent writers, one collection per side`, `context ${scale.contextBytes} B`])];
  },
};
