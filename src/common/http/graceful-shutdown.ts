import type { Server } from 'node:http';

const IDLE_SWEEP_MS = 100;

/**
 * Stops accepting connections and waits for the requests in flight to finish, closing each keep-alive
 * connection as soon as it is idle; at `graceMs` the connections still busy are cut. Resolves with the
 * number of connections that had to be cut (0: everything finished in time).
 */
export async function drainHttpServer(server: Server, graceMs: number): Promise<number> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // server.close() drops the connections idle now; those finishing a request become idle later.
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), graceMs)));
  try {
    if ((await Promise.race([closed, deadline])) !== 'deadline') return 0;
    const busy = await new Promise<number>((resolve) => server.getConnections((_error, count) => resolve(count)));
    server.closeAllConnections();
    await closed;
    return busy;
  } finally {
    clearInterval(sweep);
    clearTimeout(timer);
  }
}
