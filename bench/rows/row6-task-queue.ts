import type autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { dbLoad, httpLoad } from '../lib/load.js';
import { compare, finishRow, floorSide, type RowContext, type RowModule } from '../lib/row.js';
import { benchSchema, RESOURCE } from './intel-setup.js';
import { DELIVERY_LIMIT_ERROR, REPORT_UNFENCED, TAKE_ANY, TASK_LEASE_SECONDS, TASK_MAX_DELIVERIES } from './service-sql.js';

const ROW = { id: '6', title: 'task queue: executors take 100 at a time and complete each', unit: 'tasks/s', target: { minRatio: 0.5 } };
const FLOOR = { id: '6f', title: 'stack floor of row 6: the bare framework + pg running the same claim and completion', unit: 'tasks/s', target: {} };

/** A valid result for the bench's insight schema. */
function resultFor(domain: string) {
  return { type: 'DomainName', keys: [{ type: 'DomainName', value: domain }], context: { score: 80, source: 'bench-executor', tags: ['bench'] } };
}

/**
 * Seeds `count` pending tasks by direct SQL in the service's table
 * (src/database/migrations/1763800003000-CreateTasks.ts): what `count` registrations would have stored.
 */
async function seedTasks(ctx: RowContext, schemaId: string, count: number, tag: string): Promise<void> {
  await ctx.setupPool.query(
    `INSERT INTO insight_task (schema_id, object_keys)
     SELECT $1, json_build_array(json_build_object('type', 'DomainName', 'value', 't' || g || '-' || $3 || '.bench.example'))
       FROM generate_series(1, $2::int) AS g`,
    [schemaId, count, tag],
  );
  await ctx.setupPool.query('VACUUM ANALYZE insight_task');
}

async function pendingCount(ctx: RowContext): Promise<number> {
  const { rows } = await ctx.setupPool.query(`SELECT count(*)::int AS n FROM insight_task WHERE state = 'Pending'`);
  return (rows[0] as { n: number }).n;
}

/**
 * Row 6: `scale.tasks` pending tasks (seeded), `scale.executors` executors each looping "take up to 100
 * (`POST /insight/task-queue/executing-tasks`), then `POST …/completed-tasks` for each, one at a time" until
 * the queue is empty. Throughput = completed tasks per second, the whole drain timed. Baseline: the same
 * executors through raw `pg`, running the service's claim statement and completion UPDATE verbatim
 * (src/insight/tasks.repository.ts) on the same number of freshly seeded tasks. Each side drains its own
 * batch; the queue is empty between them. Row 6f: the same executors over HTTP against the stack floor
 * (bench/floor/), which runs the same two statements behind bare routing and JSON parsing.
 */
export const row6: RowModule = {
  rows: [ROW, FLOOR],
  requires: ['POST /insight/schemas', 'POST /insight/task-queue/executing-tasks', 'POST /insight/task-queue/completed-tasks'],
  async run(ctx) {
    const { scale } = ctx;
    if ((await pendingCount(ctx)) !== 0) throw new Error('the task queue is not empty before the row');
    const schemaId = `bench-tasks-${ctx.runId}`;
    await ctx.admin.request('POST', '/insight/schemas', { json: benchSchema(schemaId) });
    const { key } = await ctx.admin.createKey({ permissions: [{ resource: RESOURCE.taskQueue, actions: ['Write'] }] });
    const token = await ctx.admin.withKey(key).token();
    let batch = 0;

    // The executors' loop over HTTP, against the service or the stack floor (which serves the same paths).
    const overHttp = async (baseUrl: string, tasks: number) => {
      let completed = 0;
      // One executor = one connection; one cycle = take, then up to 100 completions of what it took.
      const cycle: autocannon.Request[] = [
        {
          method: 'POST',
          path: '/insight/task-queue/executing-tasks',
          body: JSON.stringify({ limit: scale.takeLimit }),
          onResponse: (status, body, context) => {
            context.taken = status === 200 ? (JSON.parse(body) as { id: string; params: { objectKeys: { value: string }[] } }[]) : [];
          },
        },
        ...Array.from({ length: scale.takeLimit }, (_, i): autocannon.Request => ({
          method: 'POST',
          path: '/insight/task-queue/completed-tasks',
          setupRequest: (request, context) => {
            const task = (context.taken as { id: string; params: { objectKeys: { value: string }[] } }[] | undefined)?.[i];
            // Fewer taken than 100: skip to the next take.
            if (!task) return null;
            return { ...request, body: JSON.stringify({ taskID: task.id, result: resultFor(task.params.objectKeys[0].value) }) };
          },
          onResponse: (status) => {
            if (status === 204 && ++completed === tasks) running.stop();
          },
        })),
      ];
      const running = httpLoad({
        baseUrl,
        connections: scale.executors,
        // Ended by stop() once every task is completed; the duration is only a safety net.
        durationS: 600,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        keepBodies: true,
        requests: cycle,
      });
      const outcome = await running.done;
      if (completed !== tasks) throw new Error(`${baseUrl} completed ${completed} of ${tasks} tasks`);
      // Executors that ran dry were still asking for work when the load stopped; let those last (empty)
      // takes finish inside the service so none of them can lease tasks of the next batch.
      await sleep(500);
      if ((await pendingCount(ctx)) !== 0) throw new Error(`tasks are still pending after ${baseUrl} drained its batch`);
      return { outcome, units: completed };
    };

    const raw = async (tasks: number) => {
      let completed = 0;
      const taken: { id: string; objectKeys: { value: string }[] }[][] = Array.from({ length: scale.executors }, () => []);
      const outcome = await dbLoad({
        pool: ctx.baselinePool,
        concurrency: scale.executors,
        step: async ({ index, client }: { index: number; client: pg.PoolClient }) => {
          const mine = taken[index];
          if (mine.length === 0) {
            const { rows } = await client.query(ctx.taskStatements.take, [
              scale.takeLimit,
              TASK_MAX_DELIVERIES,
              TASK_LEASE_SECONDS,
              DELIVERY_LIMIT_ERROR.code,
              DELIVERY_LIMIT_ERROR.message,
              ...TAKE_ANY,
            ]);
            mine.push(...(rows as { id: string; objectKeys: { value: string }[] }[]));
            return rows.length > 0;
          }
          const task = mine.shift()!;
          const result = await client.query(ctx.taskStatements.complete, [task.id, TASK_MAX_DELIVERIES, JSON.stringify(resultFor(task.objectKeys[0].value)), ...REPORT_UNFENCED]);
          if (result.rowCount !== 1) throw new Error(`task ${task.id} was not open for completion`);
          completed++;
        },
      });
      if (completed !== tasks) throw new Error(`the baseline completed ${completed} of ${tasks} tasks`);
      return { outcome, units: completed };
    };

    const served = (tasks: number) => overHttp(ctx.service.url, tasks);
    const warm = Math.min(scale.tasks, 2 * scale.executors * scale.takeLimit);
    const measured = await compare({
      rounds: 1,
      serviceLabel: 'take 100 + complete each (HTTP)',
      baselineLabel: 'raw pg: same claim + completion SQL',
      warmService: async () => {
        await seedTasks(ctx, schemaId, warm, `${ctx.runId}w${batch++}`);
        return served(warm);
      },
      warmBaseline: async () => {
        await seedTasks(ctx, schemaId, warm, `${ctx.runId}w${batch++}`);
        return raw(warm);
      },
      // Each side drains a freshly seeded batch of its own; seeding is outside the timing and CPU accounting.
      prepareService: () => seedTasks(ctx, schemaId, scale.tasks, `${ctx.runId}s${batch++}`),
      prepareBaseline: () => seedTasks(ctx, schemaId, scale.tasks, `${ctx.runId}r${batch++}`),
      service: () => served(scale.tasks),
      baseline: () => raw(scale.tasks),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      sqlParity: true,
    });
    const floor = await compare({
      rounds: 1,
      serviceLabel: `${ctx.floorName} + pg: same claim + completion`,
      baselineLabel: 'raw pg: same claim + completion SQL',
      warmService: async () => {
        await seedTasks(ctx, schemaId, warm, `${ctx.runId}w${batch++}`);
        return overHttp(ctx.floorServer.url, warm);
      },
      prepareService: () => seedTasks(ctx, schemaId, scale.tasks, `${ctx.runId}f${batch++}`),
      prepareBaseline: () => seedTasks(ctx, schemaId, scale.tasks, `${ctx.runId}r${batch++}`),
      service: () => overHttp(ctx.floorServer.url, scale.tasks),
      baseline: () => raw(scale.tasks),
      ...floorSide(ctx),
    });
    const notes = [`${scale.tasks} tasks per side, ${scale.executors} executors, take limit ${scale.takeLimit}`];
    return [finishRow(ROW, measured, notes), finishRow(FLOOR, floor, notes)];
  },
};
