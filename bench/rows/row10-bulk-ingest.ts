import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, type RowContext, type RowModule } from '../lib/row.js';
import { ROUTES, writeTargets } from './intel-setup.js';
import { benchObject } from './row3-object-add.js';

const ROW = {
  id: '10',
  title: 'bulk ingest, batches of 1,000 new objects (2 clients, 1 KB context)',
  unit: 'objects/s',
  target: { minRatio: 0.5 },
};
/** The absolute target, reported in the notes (the row's verdict is the ratio). */
const TARGET_OBJECTS_PER_S = 20_000;

/**
 * A true raw baseline, not a service statement: the same rows the service writes for a batch of new objects (objects, their key
 * rows and one `Add` change record each, numbered from the collection's counter under its row lock, as
 * the service did before its sequencer numbered records after the commit), by
 * the fastest means measured: one multi-row INSERT … SELECT FROM unnest per table in one statement, with
 * object ids drawn from the identity sequence. Not the service's statement on purpose (no parity check):
 * it is what a hand-written importer that knows every object is new would run. It moves its collection's
 * last_seq itself, in a collection only it writes (no numbering pass finds its records: they are numbered).
 * $1 collection, $2 count, $3 types, $4 keys JSON, $5 contexts JSON.
 */
const RAW_BULK_INSERT = `
  WITH seq AS (UPDATE intel_collection SET last_seq = last_seq + $2::int WHERE id = $1::int RETURNING last_seq),
  new_obj AS MATERIALIZED (
    SELECT nextval(pg_get_serial_sequence('intel_object', 'id')) AS id, n.ord, n.type, n.keys::jsonb AS keys, n.context::jsonb AS context
      FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS n(type, keys, context, ord)
  ),
  ins AS (INSERT INTO intel_object (id, collection_id, type, keys, context) SELECT id, $1::int, type, keys, context FROM new_obj),
  ins_keys AS (
    INSERT INTO intel_object_key (collection_id, key_type, value, object_id)
    SELECT $1::int, k.type, k.value, new_obj.id FROM new_obj, jsonb_to_recordset(new_obj.keys) AS k(type text, value text)
  )
  INSERT INTO intel_change (collection_id, seq, operation, object)
  SELECT $1::int, seq.last_seq - $2::int + new_obj.ord, 'Add', jsonb_build_object('type', new_obj.type, 'keys', new_obj.keys, 'context', new_obj.context)
    FROM seq, new_obj`;

/** Batch number `batch` of `size` new objects. */
function batchObjects(prefix: string, batch: number, size: number, contextBytes: number) {
  return Array.from({ length: size }, (_, i) => benchObject(prefix, batch * size + i, contextBytes));
}

/**
 * Batches of `size` new objects (batch `nextBatch()` each), `clients` at a time, for `seconds` or until
 * `amount` batches were sent; every answer must report all of them `Added`, else `incomplete` is called
 * (rows 10, 19 and 21).
 */
export function batchAdds(
  target: { baseUrl: string; path: string; headers: Record<string, string> },
  load: { clients: number; size: number; contextBytes: number; prefix: string; nextBatch: () => number; incomplete: () => void } & (
    { seconds: number; amount?: undefined } | { amount: number; seconds?: undefined }
  ),
) {
  return httpLoad({
    baseUrl: target.baseUrl,
    connections: load.clients,
    durationS: load.seconds,
    amount: load.amount,
    timeoutS: 120,
    keepBodies: true,
    headers: target.headers,
    requests: [
      {
        method: 'POST',
        path: target.path,
        setupRequest: (request) => ({
          ...request,
          body: `[${batchObjects(load.prefix, load.nextBatch(), load.size, load.contextBytes)
            .map((object) => object.body)
            .join(',')}]`,
        }),
        onResponse: (status, body) => {
          if (status === 200 && (JSON.parse(body) as { added: number }).added !== load.size) load.incomplete();
        },
      },
    ],
  }).done;
}

/**
 * Row 10: `POST /intel/collections/{c}/objects/batch`, `scale.batchClients` concurrent clients each sending
 * batches of `scale.batchItems` new DomainName objects (1 KB context, the row-3 objects) as a JSON array,
 * every answer checked to report all of them `Added`. Baseline: as many raw `pg` workers, each writing a
 * batch's rows in one transaction (a lock of the collection row, then RAW_BULK_INSERT), into a
 * collection of its own so that both sides write into tables of the same size.
 */
export const row10: RowModule = {
  rows: [ROW],
  requires: [ROUTES.registerCollection, 'POST /intel/collections/{collection_id}/objects/batch'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const { served, directId, headers } = await writeTargets(ctx, 'bulk', ['Write']);
    const size = scale.batchItems;
    let servedBatches = 0;
    let directBatches = 0;
    let incomplete = 0;

    const objectsOf = (prefix: string, batch: number) => batchObjects(prefix, batch, size, scale.contextBytes);
    const post = (seconds: number) =>
      batchAdds(
        { baseUrl: ctx.service.url, path: `/intel/collections/${served.name}/objects/batch`, headers },
        {
          clients: scale.batchClients,
          size,
          contextBytes: scale.contextBytes,
          prefix: `${ctx.runId}b`,
          seconds,
          nextBatch: () => servedBatches++,
          incomplete: () => incomplete++,
        },
      );

    const raw = (seconds: number) =>
      dbLoad({
        pool: ctx.baselinePool,
        concurrency: scale.batchClients,
        durationS: seconds,
        step: async ({ client }) => {
          const objects = objectsOf(`${ctx.runId}r`, directBatches++);
          await client.query('BEGIN');
          try {
            await client.query(`SELECT 1 FROM intel_collection WHERE id = $1 FOR NO KEY UPDATE`, [directId]);
            await client.query(RAW_BULK_INSERT, [
              directId,
              size,
              objects.map(() => 'DomainName'),
              objects.map((object) => object.keysJson),
              objects.map((object) => object.contextJson),
            ]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        },
      });

    const measured = await compare({
      rounds: scale.rounds,
      serviceLabel: `POST …/objects/batch (${size} new objects)`,
      baselineLabel: 'raw pg: lock + multi-row INSERT…unnest (objects, keys, changes)',
      warmService: () => post(scale.warmupSeconds),
      warmBaseline: () => raw(scale.warmupSeconds),
      service: async () => {
        const outcome = await post(scale.bulkSeconds);
        return { outcome, units: outcome.requests * size };
      },
      baseline: async () => {
        const outcome = await raw(scale.bulkSeconds);
        return { outcome, units: outcome.requests * size };
      },
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
    });
    if (incomplete > 0) throw new Error(`${incomplete} batches did not report all ${size} objects as Added`);
    const rate = measured.service.throughput;
    return [
      finishRow(ROW, measured, [
        `${scale.batchClients} concurrent clients, one collection per side, batches of ${size}, context ${scale.contextBytes} B`,
        `absolute target ≥ ${TARGET_OBJECTS_PER_S.toLocaleString('en-US')} objects/s: ${rate >= TARGET_OBJECTS_PER_S ? 'met' : 'missed'} (${Math.round(rate).toLocaleString('en-US')})`,
      ]),
    ];
  },
};
