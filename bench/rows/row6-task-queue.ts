import type pg from 'pg';
import { dbLoad } from '../lib/load.js';
import { compare, finishRow, floorSide, type RowModule } from '../lib/row.js';
import { benchSchema, RESOURCE } from './intel-setup.js';
import { SERVICE_SETTINGS } from './service-statements.js';
import { drainOverHttp, pendingCount, resultFor, seedTasks } from './task-drain.js';

const ROW = { id: '6', title: 'task queue: executors take 100 at a time and complete each', unit: 'tasks/s', target: { minRatio: 0.5 } };
const FLOOR = { id: '6f', title: 'stack floor of row 6: the bare framework + pg running the same claim and completion', unit: 'tasks/s', target: {} };

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
    const overHttp = (baseUrl: string, tasks: number) =>
      drainOverHttp(ctx, {
        baseUrl,
        token,
        schemaId,
        tasks,
        take: {},
        completion: (task) => ({ taskID: task.id, result: resultFor(task.params.objectKeys[0].value) }),
      });

    const { TASK_STATEMENTS } = ctx.statements.tasks;
    const raw = async (tasks: number) => {
      let completed = 0;
      const taken: { id: string; objectKeys: { value: string }[] }[][] = Array.from({ length: scale.executors }, () => []);
      const outcome = await dbLoad({
        pool: ctx.baselinePool,
        concurrency: scale.executors,
        step: async ({ index, client }: { index: number; client: pg.PoolClient }) => {
          const mine = taken[index];
          if (mine.length === 0) {
            const { rows } = await client.query(
              TASK_STATEMENTS.take,
              TASK_STATEMENTS.takeParameters(scale.takeLimit, SERVICE_SETTINGS.taskMaxDeliveries, SERVICE_SETTINGS.taskLeaseSeconds),
            );
            mine.push(...(rows as { id: string; objectKeys: { value: string }[] }[]));
            return rows.length > 0;
          }
          const task = mine.shift()!;
          const result = await client.query(
            TASK_STATEMENTS.complete,
            TASK_STATEMENTS.completeParameters(task.id, SERVICE_SETTINGS.taskMaxDeliveries, resultFor(task.objectKeys[0].value)),
          );
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
