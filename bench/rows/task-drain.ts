import { setTimeout as sleep } from 'node:timers/promises';
import type autocannon from 'autocannon';
import { httpLoad, type LoadOutcome } from '../lib/load.js';
import type { RowContext } from '../lib/row.js';

/** A queue item as executors read it: the product's three fields, plus the attempt's token in a fleet take. */
export interface TakenTask {
  id: string;
  params: { objectKeys: { value: string }[] };
  leaseToken?: string;
}

/** A valid result for the bench's insight schema. */
export function resultFor(domain: string) {
  return { type: 'DomainName', keys: [{ type: 'DomainName', value: domain }], context: { score: 80, source: 'bench-executor', tags: ['bench'] } };
}

/**
 * Seeds `count` pending tasks of `schemaId` by direct SQL in the service's table
 * (src/database/migrations/1763800003000-CreateTasks.ts): what `count` registrations would have stored.
 */
export async function seedTasks(ctx: RowContext, schemaId: string, count: number, tag: string): Promise<void> {
  await ctx.setupPool.query(
    `INSERT INTO insight_task (schema_id, object_keys)
     SELECT $1, json_build_array(json_build_object('type', 'DomainName', 'value', 't' || g || '-' || $3 || '.bench.example'))
       FROM generate_series(1, $2::int) AS g`,
    [schemaId, count, tag],
  );
  await ctx.setupPool.query('VACUUM ANALYZE insight_task');
}

/** Pending tasks, of one schema when given. */
export async function pendingCount(ctx: RowContext, schemaId?: string): Promise<number> {
  const { rows } = await ctx.setupPool.query(`SELECT count(*)::int AS n FROM insight_task WHERE state = 'Pending' AND ($1::text IS NULL OR schema_id = $1)`, [
    schemaId ?? null,
  ]);
  return (rows[0] as { n: number }).n;
}

export interface DrainSpec {
  baseUrl: string;
  /** Bearer token of a key with Write on `task-queue`. */
  token: string;
  /** The schema of the seeded batch; the drain checks none of its tasks is left pending. */
  schemaId: string;
  tasks: number;
  /** The take's body (`limit` and, for a fleet executor, `executor` and `schemas`). */
  take: Record<string, unknown>;
  /** The completion's body for a task the take handed out. */
  completion: (task: TakenTask) => Record<string, unknown>;
}

/**
 * Executors over HTTP drain a seeded batch: `scale.executors` connections, each looping "take up to
 * `scale.takeLimit`, then complete each, one at a time" until `tasks` are completed.
 */
export async function drainOverHttp(ctx: RowContext, spec: DrainSpec): Promise<{ outcome: LoadOutcome; units: number }> {
  const { scale } = ctx;
  let completed = 0;
  // One executor = one connection; one cycle = take, then up to takeLimit completions of what it took.
  const cycle: autocannon.Request[] = [
    {
      method: 'POST',
      path: '/insight/task-queue/executing-tasks',
      body: JSON.stringify({ limit: scale.takeLimit, ...spec.take }),
      onResponse: (status, body, context) => {
        context.taken = status === 200 ? (JSON.parse(body) as TakenTask[]) : [];
      },
    },
    ...Array.from({ length: scale.takeLimit }, (_, i): autocannon.Request => ({
      method: 'POST',
      path: '/insight/task-queue/completed-tasks',
      setupRequest: (request, context) => {
        const task = (context.taken as TakenTask[] | undefined)?.[i];
        // Fewer taken than takeLimit: skip to the next take.
        if (!task) return null;
        return { ...request, body: JSON.stringify(spec.completion(task)) };
      },
      onResponse: (status) => {
        if (status === 204 && ++completed === spec.tasks) running.stop();
      },
    })),
  ];
  const running = httpLoad({
    baseUrl: spec.baseUrl,
    connections: scale.executors,
    // Ended by stop() once every task is completed; the duration is only a safety net.
    durationS: 600,
    headers: { Authorization: `Bearer ${spec.token}`, 'Content-Type': 'application/json' },
    keepBodies: true,
    requests: cycle,
  });
  const outcome = await running.done;
  if (completed !== spec.tasks) throw new Error(`${spec.baseUrl} completed ${completed} of ${spec.tasks} tasks`);
  // Executors that ran dry were still asking for work when the load stopped; let those last (empty)
  // takes finish inside the service so none of them can lease tasks of the next batch.
  await sleep(500);
  if ((await pendingCount(ctx, spec.schemaId)) !== 0) throw new Error(`tasks are still pending after ${spec.baseUrl} drained its batch`);
  return { outcome, units: completed };
}
