// Minimal typings for the parts of autocannon 9 the bench uses (the package ships no types and
// @types/autocannon is not installed). See node_modules/autocannon/README.md for the full API.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface RequestData {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }

    interface Request extends RequestData {
      /** Called before each send with the per-connection context; return the request to send. */
      setupRequest?: (request: RequestData, context: Record<string, unknown>) => RequestData | null | undefined;
      /** Called with every response (body as a string; empty when the bench drops bodies). */
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => void;
    }

    /** The per-connection client autocannon creates (only what the bench touches). */
    interface Client {
      pipelinedRequests: { addBody(data: Buffer): void };
    }

    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      timeout?: number;
      sampleInt?: number;
      pipelining?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: Request[];
      setupClient?: (client: Client) => void;
      excludeErrorStats?: boolean;
    }

    interface Result {
      errors: number;
      timeouts: number;
      non2xx: number;
      totalCompletedRequests: number;
      statusCodeStats: Record<string, { count: number }>;
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
