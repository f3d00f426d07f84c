import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type pg from 'pg';
import { LatencyRecorder } from './latency.js';

/** What one load phase did: how many requests, over what time, how fast each answered, what failed. */
export interface LoadOutcome {
  /** Successful requests (or, for database drivers, finished steps). */
  requests: number;
  /** From the first request sent to the last response received. */
  elapsedS: number;
  /** Bytes received (HTTP only; headers included). */
  bytesReceived: number;
  latency: LatencyRecorder;
  /** Unexpected statuses (`"404": 3`), connection errors and timeouts. Any of them invalidates a row. */
  failures: { statuses: Record<string, number>; errors: number; timeouts: number; firstFailure?: string };
}

export function failureCount(outcome: LoadOutcome): number {
  return Object.values(outcome.failures.statuses).reduce((sum, count) => sum + count, 0) + outcome.failures.errors + outcome.failures.timeouts;
}

export interface HttpLoadOptions {
  /** `http://host:port` of the server under load. */
  baseUrl: string;
  /** Concurrent keep-alive connections, one request in flight on each (no pipelining, like real clients). */
  connections: number;
  /** Run for this long… */
  durationS?: number;
  /** …or until this many requests were made in all (split evenly across the connections). */
  amount?: number;
  /** Per-request timeout. */
  timeoutS?: number;
  /** Requests each connection cycles through; `setupRequest` makes them dynamic. */
  requests: autocannon.Request[];
  /** Headers sent on every request. */
  headers?: Record<string, string>;
  /**
   * Keep response bodies for `onResponse`. Off by default: autocannon appends every body chunk to a
   * string, which on multi-megabyte downloads costs the load generator more CPU than the server.
   */
  keepBodies?: boolean;
  /** Which statuses count as success (default 2xx). */
  accept?: (status: number) => boolean;
}

export interface RunningLoad {
  done: Promise<LoadOutcome>;
  /** Ends the load early (e.g. when a queue is drained); in-flight requests are dropped. */
  stop(): void;
}

/** Runs HTTP load with autocannon and records exact per-request latencies from its response events. */
export function httpLoad(options: HttpLoadOptions): RunningLoad {
  const accept = options.accept ?? ((status: number) => status >= 200 && status < 300);
  const latency = new LatencyRecorder();
  const failures: LoadOutcome['failures'] = { statuses: {}, errors: 0, timeouts: 0 };
  let requests = 0;
  let bytesReceived = 0;
  const started = performance.now();
  let lastResponse = started;

  const instance = autocannon({
    url: options.baseUrl,
    connections: options.connections,
    ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.durationS ?? 10 }),
    timeout: options.timeoutS ?? 30,
    // Results are only emitted on a sample tick; a short tick keeps the tail wait small. The bench's own
    // clock (first send → last response) is what the throughput is computed from.
    sampleInt: 100,
    requests: options.requests,
    headers: options.headers,
    setupClient: options.keepBodies
      ? undefined
      : (client) => {
          client.pipelinedRequests.addBody = () => undefined;
        },
  });
  instance.on('response', (_client: unknown, status: number, bytes: number, responseTimeMs: number) => {
    lastResponse = performance.now();
    if (accept(status)) {
      requests++;
      bytesReceived += bytes;
      latency.record(responseTimeMs);
    } else {
      failures.statuses[status] = (failures.statuses[status] ?? 0) + 1;
    }
  });
  instance.on('reqError', (error: Error) => {
    if (/timed out/.test(error.message)) failures.timeouts++;
    else failures.errors++;
    failures.firstFailure ??= error.message;
  });
  const done = new Promise<LoadOutcome>((resolve, reject) => {
    instance.then(
      () =>
        resolve({
          requests,
          elapsedS: Math.max(lastResponse - started, 1) / 1000,
          bytesReceived,
          latency,
          failures,
        }),
      reject,
    );
  });
  return { done, stop: () => instance.stop() };
}

export interface DbWorker {
  index: number;
  client: pg.PoolClient;
}

export interface DbLoadOptions {
  pool: pg.Pool;
  /** Concurrent workers, each holding one connection for the whole phase (like one HTTP connection). */
  concurrency: number;
  durationS?: number;
  /** Total steps across all workers. */
  amount?: number;
  /**
   * One step of a worker (the equivalent of one HTTP request); its time is one latency sample.
   * Returning `false` ends that worker (e.g. the queue is drained).
   */
  step: (worker: DbWorker) => Promise<boolean | void>;
}

/** Drives the raw `pg` baselines: `concurrency` workers running `step` back to back. */
export async function dbLoad(options: DbLoadOptions): Promise<LoadOutcome> {
  const clients = await Promise.all(Array.from({ length: options.concurrency }, () => options.pool.connect()));
  try {
    return await stepLoad({ ...options, step: (index) => options.step({ index, client: clients[index] }) });
  } finally {
    for (const client of clients) client.release();
  }
}

export interface StepLoadOptions {
  /** Concurrent workers, each running its steps one after another (like one HTTP connection). */
  concurrency: number;
  durationS?: number;
  /** Total steps across all workers. */
  amount?: number;
  /** One step of worker `index`; its time is one latency sample. Returning `false` ends that worker. */
  step: (index: number) => Promise<boolean | void>;
}

/** Runs client-side steps (raw driver or SDK calls, the baselines that are not HTTP) and times them. */
export async function stepLoad(options: StepLoadOptions): Promise<LoadOutcome> {
  const latency = new LatencyRecorder();
  const failures: LoadOutcome['failures'] = { statuses: {}, errors: 0, timeouts: 0 };
  let requests = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = options.durationS !== undefined ? started + options.durationS * 1000 : Infinity;
  let lastFinish = started;
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, index) => {
      for (;;) {
        if (performance.now() >= deadline) return;
        if (options.amount !== undefined && issued >= options.amount) return;
        issued++;
        const t0 = performance.now();
        let more: boolean | void;
        try {
          more = await options.step(index);
        } catch (error) {
          failures.errors++;
          failures.firstFailure ??= error instanceof Error ? error.message : String(error);
          return;
        }
        lastFinish = performance.now();
        latency.record(lastFinish - t0);
        requests++;
        if (more === false) return;
      }
    }),
  );
  return { requests, elapsedS: Math.max(lastFinish - started, 1) / 1000, bytesReceived: 0, latency, failures };
}

/** One request of `sequentialHttpLoad`; `body` may be a view of a buffer the caller reuses once it is answered. */
export interface SequentialRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  onResponse?: (status: number, body: string) => void;
}

/**
 * Requests one after another on each of `connections` keep-alive connections (default one), each made by
 * `next(index, connection)` just before it is sent, with autocannon's accounting (latency from sending to
 * the whole response, elapsed time from the first send to the last response). Unlike autocannon it sends
 * `body` as given, without copying it behind the request line, so a caller can send multi-megabyte bodies
 * from one reused buffer per connection (rows 7a and 7b).
 */
export async function sequentialHttpLoad(options: {
  baseUrl: string;
  amount: number;
  next: (index: number, connection: number) => SequentialRequest;
  connections?: number;
  headers?: Record<string, string>;
  timeoutS?: number;
}): Promise<LoadOutcome> {
  const latency = new LatencyRecorder();
  const failures: LoadOutcome['failures'] = { statuses: {}, errors: 0, timeouts: 0 };
  const connections = options.connections ?? 1;
  // At most one request in flight per connection loop, so the agent keeps that many sockets alive.
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let issued = 0;
  let requests = 0;
  let bytesReceived = 0;
  let started: number | undefined;
  let lastResponse = 0;
  const connection = async (connectionIndex: number) => {
    while (issued < options.amount) {
      const request = options.next(issued++, connectionIndex);
      const t0 = performance.now();
      started ??= t0;
      try {
        const { status, body } = await send(agent, options.baseUrl, request, options.headers, (options.timeoutS ?? 30) * 1000);
        lastResponse = performance.now();
        bytesReceived += Buffer.byteLength(body);
        if (status >= 200 && status < 300) {
          requests++;
          latency.record(lastResponse - t0);
          request.onResponse?.(status, body);
        } else {
          failures.statuses[status] = (failures.statuses[status] ?? 0) + 1;
          failures.firstFailure ??= `${request.method} ${request.path}: ${status} ${body.slice(0, 200)}`;
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (/timed out/.test(message)) failures.timeouts++;
        else failures.errors++;
        failures.firstFailure ??= message;
        return;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, (_, index) => connection(index)));
  } finally {
    agent.destroy();
  }
  return { requests, elapsedS: Math.max(lastResponse - (started ?? lastResponse), 1) / 1000, bytesReceived, latency, failures };
}

/** Resolves once the response is read and the body has left (so its buffer may be reused). */
function send(
  agent: http.Agent,
  baseUrl: string,
  request: SequentialRequest,
  headers: Record<string, string> | undefined,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(new URL(request.path, baseUrl), {
      agent,
      method: request.method,
      headers: { ...headers, ...request.headers, 'Content-Length': String(request.body?.length ?? 0) },
    });
    let sent = false;
    let answer: { status: number; body: string } | undefined;
    const settle = () => {
      if (sent && answer) resolve(answer);
    };
    outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`${request.method} ${request.path} timed out`)));
    outgoing.on('error', reject);
    outgoing.on('finish', () => {
      sent = true;
      settle();
    });
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        answer = { status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') };
        settle();
      });
    });
    outgoing.end(request.body);
  });
}
