import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { compare, finishRow, type RowModule } from '../lib/row.js';
import { benchSchema, RESOURCE } from './intel-setup.js';
import { SERVICE_SETTINGS } from './service-statements.js';
import { drainOverHttp, resultFor, seedTasks, type TakenTask } from './task-drain.js';

const ROW = {
  id: '23',
  title: 'fenced queue: row 6 with lease tokens, 1,000 other leased tasks heartbeating every third of their lease',
  unit: 'tasks/s',
  target: { minRatio: 0.8 },
};

/** The leased tasks held beside the drain, their lease (the service's), and how often each heartbeats (a third of it). */
const HELD_LEASE_SECONDS = SERVICE_SETTINGS.taskLeaseSeconds;
const BEAT_EVERY_MS = (HELD_LEASE_SECONDS / 3) * 1000;

/** At most this many heartbeats in flight (keep-alive connections); more wait for a free one. */
const BEAT_CONNECTIONS = 8;

/** One heartbeat over `agent`: resolves with the answer's status, or an error's message. */
function beat(agent: http.Agent, url: URL, token: string, body: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode!));
      },
    );
    request.on('error', (error) => resolve(error.message));
    request.end(body);
  });
}

/**
 * Heartbeats of `held` tasks, each every BEAT_EVERY_MS, spread evenly (one every BEAT_EVERY_MS / held ms,
 * round-robin), until stopped. Any answer but 200 is counted: a refused heartbeat would drop a lease.
 */
function heartbeating(baseUrl: string, token: string, held: TakenTask[]) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: BEAT_CONNECTIONS });
  const url = new URL('/insight/task-queue/heartbeats', baseUrl);
  let running = true;
  let sent = 0;
  let refused = 0;
  let firstRefusal: number | string | undefined;
  const interval = BEAT_EVERY_MS / held.length;
  const started = performance.now();
  const loop = (async () => {
    const inFlight = new Set<Promise<void>>();
    while (running) {
      const task = held[sent % held.length];
      const body = JSON.stringify({ taskID: task.id, leaseToken: task.leaseToken, extendSeconds: HELD_LEASE_SECONDS });
      const answered = beat(agent, url, token, body).then((status) => {
        if (status !== 200) {
          refused++;
          firstRefusal ??= status;
        }
      });
      const tracked = answered.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
      sent++;
      // Paced by the schedule, not by the answers (the agent queues what its connections cannot carry yet);
      // always yields (sleep(0) when behind), so the answers and stop() are handled.
      await sleep(Math.max(0, started + sent * interval - performance.now()));
    }
    await Promise.all(inFlight);
    agent.destroy();
  })();
  return {
    async stop(): Promise<{ sent: number }> {
      running = false;
      await loop;
      if (refused > 0) throw new Error(`${refused} of ${sent} heartbeats were refused (first: ${firstRefusal})`);
      return { sent };
    },
  };
}

/**
 * Row 23: row 6's drain as a fleet executor does it (take with `executor` and `schemas`, so every item
 * carries a lease token; each completion sends its token), while 1,000 tasks of another schema stay leased
 * by heartbeats, each every third of its lease, against row 6 as it stands (take and complete without
 * tokens, nothing else leased), both through the service. The held tasks are taken through the API
 * before the measured side (untimed) with the service's lease (TASK_LEASE_SECONDS, 300 s: 10 heartbeats/s;
 * a heartbeat writes the row only once less than half the lease is left, so hardly ever during the drain).
 * They are completed after the side, so the baseline's takes (any schema, as the product's client takes)
 * never see them.
 */
export const row23: RowModule = {
  rows: [ROW],
  requires: ['POST /insight/task-queue/executing-tasks', 'POST /insight/task-queue/completed-tasks', 'POST /insight/task-queue/heartbeats'],
  async run(ctx) {
    const { scale } = ctx;
    // The quick scale (which proves the row runs) holds a tenth of the tasks.
    const heldCount = scale.quick ? 100 : 1000;
    const drained = `bench-fenced-${ctx.runId}`;
    const heldSchema = `bench-held-${ctx.runId}`;
    for (const schemaId of [drained, heldSchema]) await ctx.admin.request('POST', '/insight/schemas', { json: benchSchema(schemaId) });
    const { key } = await ctx.admin.createKey({ permissions: [{ resource: RESOURCE.taskQueue, actions: ['Write'] }] });
    const token = await ctx.admin.withKey(key).token();
    const executor = ctx.admin.withToken(token);
    let batch = 0;
    let beats: ReturnType<typeof heartbeating> | undefined;
    let held: TakenTask[] = [];
    let heartbeats = 0;

    // Before the measured side (untimed): the held tasks are taken and their heartbeats started.
    const hold = async () => {
      await seedTasks(ctx, heldSchema, heldCount, `${ctx.runId}h${batch++}`);
      held = await executor.json<TakenTask[]>('POST', '/insight/task-queue/executing-tasks', {
        limit: heldCount,
        executor: 'bench-sandbox',
        schemas: [heldSchema],
      });
      if (held.length !== heldCount) throw new Error(`took ${held.length} of ${heldCount} tasks to hold`);
      beats = heartbeating(ctx.service.url, token, held);
    };
    // After the drain (outside its timing): the heartbeats stop and the held tasks are completed with their tokens.
    const release = async () => {
      heartbeats += (await beats!.stop()).sent;
      for (const task of held) {
        await executor.request('POST', '/insight/task-queue/completed-tasks', {
          json: { taskID: task.id, leaseToken: task.leaseToken, result: resultFor(task.params.objectKeys[0].value) },
        });
      }
    };

    const fenced = async (tasks: number) => {
      try {
        return await drainOverHttp(ctx, {
          baseUrl: ctx.service.url,
          token,
          schemaId: drained,
          tasks,
          take: { executor: 'bench-executor', schemas: [drained] },
          completion: (task) => ({ taskID: task.id, leaseToken: task.leaseToken, result: resultFor(task.params.objectKeys[0].value) }),
        });
      } finally {
        await release();
      }
    };
    const plain = (tasks: number) =>
      drainOverHttp(ctx, {
        baseUrl: ctx.service.url,
        token,
        schemaId: drained,
        tasks,
        take: {},
        completion: (task) => ({ taskID: task.id, result: resultFor(task.params.objectKeys[0].value) }),
      });

    const warm = Math.min(scale.tasks, 2 * scale.executors * scale.takeLimit);
    const seed = (tag: string, count: number) => seedTasks(ctx, drained, count, `${ctx.runId}${tag}${batch++}`);
    const measured = await compare({
      rounds: 1,
      serviceLabel: `fleet take + complete with tokens, ${heldCount} leased tasks heartbeating (HTTP)`,
      baselineLabel: 'row 6: take 100 + complete each (HTTP)',
      warmService: async () => {
        await seed('w', warm);
        await hold();
        return fenced(warm);
      },
      warmBaseline: async () => {
        await seed('w', warm);
        return plain(warm);
      },
      prepareService: async () => {
        await seed('s', scale.tasks);
        await hold();
      },
      prepareBaseline: () => seed('b', scale.tasks),
      service: () => fenced(scale.tasks),
      baseline: () => plain(scale.tasks),
      serviceProbe: ctx.service.server.probe,
      cpu: ctx.cpu,
      sql: ctx.sqlStats,
      bothSidesThroughService: true,
    });
    const notes = [
      `${scale.tasks} tasks per side, ${scale.executors} executors, take limit ${scale.takeLimit}`,
      `${heldCount} held tasks, ${HELD_LEASE_SECONDS} s leases, a heartbeat each every ${BEAT_EVERY_MS / 1000} s (${heartbeats} heartbeats in all, warm-up included)`,
    ];
    return [finishRow(ROW, measured, notes)];
  },
};
