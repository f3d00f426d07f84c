import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { cursorOf, parseLinks } from '../lib/api.js';
import { LatencyRecorder } from '../lib/latency.js';
import { MemoryWindow } from '../lib/memory.js';
import type { RowContext, RowModule, RowResult, SideResult } from '../lib/row.js';
import { createCollection } from './intel-setup.js';

const ROW13 = { id: '13', title: 'feed push latency: writer 2xx → follower response', unit: 'changes/s', target: {} };
const ROW14 = { id: '14', title: 'idle long-polls held on an empty feed', unit: 'waiters', target: { maxGrowthMiB: 64 } };

const CHANGES = '/intel/collections/{collection_id}/objects/changes';

/** A GET through a dedicated socket (no agent pooling), so hundreds can be held at once. */
function get(url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<{ status: number; link?: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false, signal }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const link = response.headers.link;
        resolve({ status: response.statusCode ?? 0, link: Array.isArray(link) ? link.join(', ') : link, body: text ? JSON.parse(text) : undefined });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/** The feed position now: the changes cursor of a first listing page. */
async function changesCursor(ctx: RowContext, collection: string): Promise<string> {
  const link = (await ctx.admin.request('GET', `/intel/collections/${collection}/objects?limit=1`)).headers.get('link') ?? undefined;
  const related = parseLinks(link).related;
  const cursor = related && cursorOf(related);
  if (!cursor) throw new Error('the first objects page carried no rel="related" changes cursor');
  return cursor;
}

interface FeedSide {
  latency: LatencyRecorder;
  delivered: number;
  requests: number;
  elapsedS: number;
}

/**
 * One writer adds `count` objects, one every 10 ms (each add waits for its 2xx), while one follower reads
 * the feed: with `wait=30` (long-poll), or without wait, sleeping `pollMs` after every empty page (the
 * baseline: polling every second). Latency of a change = the moment the follower's response holding it
 * arrived − the moment the writer's 2xx for it arrived (negative when the push beat the writer's answer).
 */
async function feedLatency(ctx: RowContext, collection: string, startCursor: string, count: number, tag: string, mode: 'push' | 'poll'): Promise<FeedSide> {
  const headers = { 'X-Api-Key': ctx.service.adminKey };
  const acknowledged = new Map<string, number>();
  const received = new Map<string, number>();
  let requests = 0;
  const started = performance.now();

  const follower = (async () => {
    let path = `/intel/collections/${collection}/objects/changes?cursor=${startCursor}&limit=1000${mode === 'push' ? '&wait=30' : ''}`;
    while (received.size < count) {
      const response = await get(`${ctx.service.url}${path}`, headers);
      requests++;
      const at = performance.now();
      if (response.status !== 200) throw new Error(`changes answered ${response.status}`);
      for (const change of response.body as { object: { keys: { value: string }[] } }[]) received.set(change.object.keys[0].value, at);
      const next = parseLinks(response.link).next;
      if (next) path = next;
      else if (mode === 'poll') await sleep(1000);
    }
  })();

  for (let i = 0; i < count; i++) {
    const value = `l${i}-${tag}.bench.example`;
    const due = started + i * 10;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    await ctx.admin.request('POST', `/intel/collections/${collection}/objects`, {
      json: { type: 'DomainName', keys: [{ type: 'DomainName', value }], context: {} },
    });
    acknowledged.set(value, performance.now());
  }
  await follower;
  const latency = new LatencyRecorder();
  for (const [value, at] of acknowledged) {
    const seen = received.get(value);
    if (seen === undefined) throw new Error(`the follower never received ${value}`);
    latency.record(seen - at);
  }
  return { latency, delivered: received.size, requests, elapsedS: (performance.now() - started) / 1000 };
}

function side(label: string, measured: FeedSide): SideResult {
  return {
    label,
    throughput: measured.delivered / measured.elapsedS,
    units: measured.delivered,
    requests: measured.requests,
    allRequests: measured.requests,
    elapsedS: measured.elapsedS,
    p50Ms: measured.latency.percentile(50),
    p99Ms: measured.latency.percentile(99),
  };
}

async function row13(ctx: RowContext): Promise<RowResult> {
  const count = ctx.scale.quick ? 50 : 500;
  const collection = await createCollection(ctx, 'push');
  // Untimed warm-up, then each side from the feed's position at its start.
  await feedLatency(ctx, collection.name, await changesCursor(ctx, collection.name), 20, `${ctx.runId}w`, 'push');
  const pushWindow = new MemoryWindow(ctx.service.server.probe).start();
  const push = await feedLatency(ctx, collection.name, await changesCursor(ctx, collection.name), count, `${ctx.runId}p`, 'push');
  const pushMemory = pushWindow.stop();
  const pollWindow = new MemoryWindow(ctx.service.server.probe).start();
  const poll = await feedLatency(ctx, collection.name, await changesCursor(ctx, collection.name), count, `${ctx.runId}q`, 'poll');
  const pollMemory = pollWindow.stop();
  const service = { ...side('GET …/changes?wait=30 (long-poll)', push), memory: pushMemory };
  const baseline = { ...side('GET …/changes, polled every 1 s', poll), memory: pollMemory };
  const median = service.p50Ms ?? Infinity;
  return {
    ...ROW13,
    status: 'ok',
    service,
    baseline,
    // How many times sooner a change reaches the long-polling follower than the polling one (medians).
    ratio: (baseline.p50Ms ?? 0) / median,
    met: median < 50,
    notes: [
      `row 13: ${count} adds, one every 10 ms; latency = follower's response − writer's 2xx (median target < 50 ms: ${median.toFixed(1)} ms).`,
      `row 13: ratio = baseline median ÷ long-poll median; requests: long-poll ${push.requests}, polling ${poll.requests}.`,
    ],
  };
}

/** Connections of the service's role to its database: open, and running a statement right now. */
async function connections(ctx: RowContext, user: string): Promise<{ open: number; active: number }> {
  const { rows } = await ctx.setupPool.query(
    `SELECT count(*)::int AS open, count(*) FILTER (WHERE state = 'active')::int AS active
       FROM pg_stat_activity WHERE usename = $1 AND datname = current_database()`,
    [user],
  );
  return rows[0] as { open: number; active: number };
}

/** Watches the service for `seconds`: CPU, RSS growth, and the most database connections seen. */
async function watch(ctx: RowContext, seconds: number, user: string) {
  const window = new MemoryWindow(ctx.service.server.probe).start();
  let open = 0;
  let active = 0;
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const now = await connections(ctx, user);
    open = Math.max(open, now.open);
    active = Math.max(active, now.active);
    await sleep(250);
  }
  return { memory: window.stop(), open, active };
}

async function row14(ctx: RowContext): Promise<RowResult> {
  const waiters = ctx.scale.quick ? 50 : 500;
  const hold = ctx.scale.quick ? 2 : 20;
  const user = decodeURIComponent(new URL(ctx.db.serviceUrl).username);
  const collection = await createCollection(ctx, 'idle');
  const cursor = await changesCursor(ctx, collection.name);
  const feed = `${ctx.service.url}/intel/collections/${collection.name}/objects/changes?cursor=${cursor}`;
  const headers = { 'X-Api-Key': ctx.service.adminKey };
  const timed = async (url: string, latency: LatencyRecorder) => {
    const start = performance.now();
    const response = await get(url, headers);
    if (response.status !== 200 || (response.body as unknown[]).length !== 0) throw new Error(`an empty feed answered ${response.status}`);
    latency.record(performance.now() - start);
  };

  // Baseline: the same service, idle over the same time, with one plain (wait=0) poll of the empty feed
  // every 250 ms for its latency.
  const polled = new LatencyRecorder();
  let polling = true;
  const poller = (async () => {
    while (polling) {
      await timed(feed, polled);
      await sleep(250);
    }
  })();
  const idle = await watch(ctx, hold, user);
  polling = false;
  await poller;
  // `waiters` long-polls on the empty feed, answered when their wait runs out, just after the window.
  const heldLatency = new LatencyRecorder();
  const held = Array.from({ length: waiters }, () => timed(`${feed}&wait=${hold + 2}`, heldLatency));
  await sleep(1000); // every request has arrived and is waiting
  const busy = await watch(ctx, hold, user);
  await Promise.all(held);
  const result = (label: string, watched: Awaited<ReturnType<typeof watch>>, count: number, latency: LatencyRecorder): SideResult => ({
    label,
    throughput: count,
    units: count,
    requests: latency.count,
    allRequests: latency.count,
    elapsedS: hold,
    p50Ms: latency.percentile(50),
    p99Ms: latency.percentile(99),
    memory: watched.memory,
  });
  const service = result(`${waiters} × GET …/changes?wait=${hold + 2} held`, busy, waiters, heldLatency);
  const baseline = result(`idle service (plain polls every 250 ms), ${hold} s`, idle, 0, polled);
  const growth = busy.memory.growthMiB;
  const cpuShare = busy.memory.cpuSeconds / hold;
  return {
    ...ROW14,
    status: 'ok',
    service,
    baseline,
    // CPU with the waiters ÷ CPU idle over the same time.
    ratio: busy.memory.cpuSeconds / Math.max(idle.memory.cpuSeconds, 0.01),
    met: growth < 64 && busy.active <= Math.max(1, idle.active) && cpuShare < 0.05,
    notes: [
      `row 14: service CPU ${busy.memory.cpuSeconds.toFixed(2)} s over ${hold} s with ${waiters} waiters (${(cpuShare * 100).toFixed(1)} % of a core) vs ${idle.memory.cpuSeconds.toFixed(2)} s idle.`,
      `row 14: RSS growth ${growth.toFixed(1)} MiB with waiters (idle: ${idle.memory.growthMiB.toFixed(1)} MiB); target < 64 MiB.`,
      `row 14: database connections of the service, most seen: ${busy.open} open / ${busy.active} running a statement with waiters; ${idle.open} open / ${idle.active} idle.`,
    ],
  };
}

/** Rows 13 and 14: what long-polling costs and gains (docs/long-poll-and-expiry.md). */
export const row13and14: RowModule = {
  rows: [ROW13, ROW14],
  requires: ['POST /intel/collections', `GET ${CHANGES}`],
  async run(ctx) {
    return [await row13(ctx), await row14(ctx)];
  },
};
