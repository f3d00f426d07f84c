import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, floorSide, type RowContext, type RowModule } from '../lib/row.js';
import { numberPending, ROUTES, writeTargets } from './intel-setup.js';
import { RAW_WRITE_ORIGIN } from './service-statements.js';

const NEW = { id: '3a', title: 'object add, new objects (16 clients, 1 KB context)', unit: 'objects/s', target: { minRatio: 0.5 } };
const NEW_FLOOR = { id: '3af', title: 'stack floor of 3a: the bare framework + pg running the same add statements', unit: 'objects/s', target: {} };
const RESEND = { id: '3b', title: 'object add, identical re-sends', unit: 'objects/s', target: { minRatio: 0.5 } };
const RESEND_FLOOR = { id: '3bf', title: 'stack floor of 3b: the bare framework + pg running the same pre-check', unit: 'objects/s', target: {} };

/**
 * Object number `n` of a collection: a DomainName with a ~`contextBytes` context valid for the bench schema;
 * `revision` (row 3d) makes a context of the same object and size that differs from every other revision.
 */
export function benchObject(prefix: string, n: number, contextBytes: number, revision = 0) {
  const value = `o${n}-${prefix}.bench.example`;
  const context: Record<string, unknown> = { score: n % 101, source: `bench-feed-${revision}`, tags: ['phishing', 'bench'], note: '' };
  const bare = JSON.stringify(context).length;
  context.note = 'x'.repeat(Math.max(0, contextBytes - bare));
  const keys = [{ type: 'DomainName', value }];
  const contextJson = JSON.stringify(context);
  return {
    value,
    keysJson: JSON.stringify(keys),
    contextJson,
    body: `{"type":"DomainName","keys":${JSON.stringify(keys)},"context":${contextJson}}`,
  };
}

/** The `n`th add of a collection cycling through `cycle` objects: each pass re-sends them in a new revision (row 3d). */
export const cycledObject = (prefix: string, n: number, cycle: number, contextBytes: number) =>
  benchObject(prefix, n % cycle, contextBytes, 1 + Math.floor(n / cycle));

/**
 * `POST …/objects` of object `pick()` from `connections` writers for `seconds` (with `cycle`, the `pick()`th
 * add of `cycledObject`); `confirmed` collects the numbers of the objects answered 204 (rows 3, 3c, 3d, 19).
 */
export function objectAdds(
  target: { baseUrl: string; path: string; headers: Record<string, string> },
  load: { connections: number; contextBytes: number; prefix: string; seconds: number; pick: () => number; cycle?: number; confirmed?: number[] },
) {
  const objectOf = (n: number) =>
    load.cycle === undefined ? benchObject(load.prefix, n, load.contextBytes) : cycledObject(load.prefix, n, load.cycle, load.contextBytes);
  return httpLoad({
    baseUrl: target.baseUrl,
    connections: load.connections,
    durationS: load.seconds,
    headers: target.headers,
    requests: [
      {
        method: 'POST',
        path: target.path,
        setupRequest: (request, context) => {
          context.n = load.pick();
          return { ...request, body: objectOf(context.n as number).body };
        },
        onResponse: (status, _body, context) => {
          if (status === 204) load.confirmed?.push(context.n as number);
        },
      },
    ],
  }).done;
}

/**
 * Row 3: `POST /intel/collections/{c}/objects`, one object per request, `scale.connections` concurrent
 * writers into one collection (they all take that collection's feed lock, by design).
 *   3a: every request a new object (insert + key + change record in one transaction).
 *   3b: identical re-sends of the objects 3a created (the service answers from its unlocked pre-check).
 * Baseline: a raw `pg` client per worker, same concurrency, running for each object exactly the SQL
 * ObjectsService.add runs (the key pre-check, then for a new object the autocommitted insert statement
 * that also numbers and records the change; collection and schema version come from in-process caches),
 * into its own collection so
 * both sides write into tables of the same size. Not in the baseline: the per-request API-key lookup
 * (measured by row 1) and everything non-SQL (HTTP, validation, Ajv, JSON): that is what the ratio shows.
 *   3af: the stack floor (bench/floor/) adding new objects with the service's own statements (pre-check,
 *        insert) behind bare HTTP routing and JSON parsing: the best 3a ratio possible on that stack.
 *   3bf: the stack floor re-sending the baseline's objects, which runs the same pre-check with the same
 *        parameters: the best 3b ratio possible there.
 */
export const row3: RowModule = {
  rows: [NEW, NEW_FLOOR, RESEND, RESEND_FLOOR],
  requires: [ROUTES.registerSchema, ROUTES.registerCollection, 'POST /intel/collections/{collection_id}/objects'],
  async run(ctx: RowContext) {
    const { scale } = ctx;
    const { served, direct, directId, headers } = await writeTargets(ctx, 'add', ['Read', 'Write']);
    const path = `/intel/collections/${served.name}/objects`;

    // Object numbers handed out per side; re-sends cycle through what the first phase created.
    // Only objects the service confirmed (204) are re-sent: requests still in flight when a timed phase
    // ends are dropped by the load generator and may never have been stored.
    let servedNext = 0;
    let directNext = 0;
    const servedConfirmed: number[] = [];
    const postTo = (baseUrl: string, target: string, prefix: string, seconds: number, pick: () => number, confirmed?: number[]) =>
      objectAdds({ baseUrl, path: target, headers }, { connections: scale.connections, contextBytes: scale.contextBytes, prefix, seconds, pick, confirmed });
    const post = (seconds: number, pick: () => number) => postTo(ctx.service.url, path, ctx.runId, seconds, pick, servedConfirmed);

    // The service resolves the collection and the schema version from invalidated in-process caches
    // (no statement per request), so the baseline resolves its collection once, here.
    const rawAdd =
      (n: number) =>
      async ({ client }: { client: import('pg').PoolClient }) => {
        const object = benchObject(`${ctx.runId}r`, n, scale.contextBytes);
        // The service's own statements under its names, prepared as it prepares them (ObjectsRepository), with
        // the values its parameter builders give.
        const { OBJECT_STATEMENTS, findHitsParameters, WRITE_PARAMETERS } = ctx.statements.objects;
        const key = { type: 'DomainName', value: object.value };
        const hits = await client.query({
          ...OBJECT_STATEMENTS.findHits,
          values: findHitsParameters(directId, [key], object.contextJson, { at: null, ttlSeconds: null }),
        });
        if (hits.rowCount !== 0) return; // an identical re-send: the service answers from this pre-check too
        // A new object: one autocommitted statement (ObjectsService.add → ObjectsRepository.writeAsDecided).
        const written = await client.query({
          ...OBJECT_STATEMENTS.insert,
          values: WRITE_PARAMETERS.insert.values({
            collectionId: directId,
            type: 'DomainName',
            keys: object.keysJson,
            context: object.contextJson,
            expiresAt: null,
            ttlSeconds: null,
            // A native add naming no marking: the collection's defaultTLP, CLEAR.
            tlp: 0,
            ...RAW_WRITE_ORIGIN,
          }),
        });
        if (written.rowCount !== 1) throw new Error(`object ${object.value} was not written`);
      };
    const raw = (seconds: number, pick: () => number) =>
      dbLoad({ pool: ctx.baselinePool, concurrency: scale.connections, durationS: seconds, step: (worker) => rawAdd(pick())(worker) });

    // The baseline's change records are numbered before each service phase (see numberPending).
    const numberBaselineRecords = () => numberPending(ctx, direct.name);
    const fresh = await compare({
      rounds: scale.rounds,
      prepareService: numberBaselineRecords,
      serviceLabel: 'POST …/objects, new object',
      baselineLabel: 'raw pg: same SQL per object',
      warmService: () => post(scale.warmupSeconds, () => servedNext++),
      warmBaseline: () => raw(scale.warmupSeconds, () => directNext++),
      service: async () => ({ outcome: await post(scale.objectAddSeconds, () => servedNext++) }),
      baseline: async () => ({ outcome: await raw(scale.objectAddSeconds, () => directNext++) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      sqlParity: true,
    });
    // The floor's new objects go to the baseline's collection too (tables of the same size), under their own names.
    let floorNext = 0;
    const floorPost = (seconds: number, prefix: string, pick: () => number) =>
      postTo(ctx.floorServer.url, `/intel/collections/${directId}/objects`, prefix, seconds, pick);
    const freshFloor = await compare({
      rounds: scale.rounds,
      serviceLabel: `${ctx.floorName} + pg: same add statements`,
      baselineLabel: 'raw pg: same SQL per object',
      warmService: () => floorPost(scale.warmupSeconds, `${ctx.runId}f`, () => floorNext++),
      warmBaseline: () => raw(scale.warmupSeconds, () => directNext++),
      service: async () => ({ outcome: await floorPost(scale.objectAddSeconds, `${ctx.runId}f`, () => floorNext++) }),
      baseline: async () => ({ outcome: await raw(scale.objectAddSeconds, () => directNext++) }),
      ...floorSide(ctx),
    });
    const confirmed = [...servedConfirmed];
    const servedCreated = confirmed.length;
    const directCreated = directNext;
    let servedResend = 0;
    let directResend = 0;
    const resendServed = () => confirmed[servedResend++ % servedCreated];
    const resent = await compare({
      rounds: scale.rounds,
      serviceLabel: 'POST …/objects, identical re-send',
      baselineLabel: 'raw pg: same SQL per object',
      warmService: () => post(scale.warmupSeconds, resendServed),
      warmBaseline: () => raw(scale.warmupSeconds, () => directResend++ % directCreated),
      service: async () => ({ outcome: await post(scale.objectAddSeconds, resendServed) }),
      baseline: async () => ({ outcome: await raw(scale.objectAddSeconds, () => directResend++ % directCreated) }),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      sqlParity: true,
    });
    // The floor re-sends the baseline's objects, so that both run the very same statement and parameters.
    let floorResend = 0;
    const floorResent = (seconds: number) => floorPost(seconds, `${ctx.runId}r`, () => floorResend++ % directCreated);
    const floor = await compare({
      rounds: scale.rounds,
      serviceLabel: `${ctx.floorName} + pg: same pre-check`,
      baselineLabel: 'raw pg: same SQL per object',
      warmService: () => floorResent(scale.warmupSeconds),
      warmBaseline: () => raw(scale.warmupSeconds, () => directResend++ % directCreated),
      service: async () => ({ outcome: await floorResent(scale.objectAddSeconds) }),
      baseline: async () => ({ outcome: await raw(scale.objectAddSeconds, () => directResend++ % directCreated) }),
      ...floorSide(ctx),
    });
    const notes = [`${scale.connections} concurrent writers, one collection per side`, `context ${scale.contextBytes} B`];
    return [
      finishRow(NEW, fresh, [
        ...notes,
        `service created ${servedCreated} objects, baseline ${directCreated}`,
        `service at ${(fresh.service.throughput / freshFloor.service.throughput).toFixed(2)} of the floor (3af)`,
      ]),
      finishRow(NEW_FLOOR, freshFloor, notes),
      finishRow(RESEND, resent, notes),
      finishRow(RESEND_FLOOR, floor, notes),
    ];
  },
};
