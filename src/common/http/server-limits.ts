import type { Server } from 'node:http';
import type { ServerLimits } from '../../config/app-config.js';

/** Node enforces the headers and request deadlines only when it sweeps its connections; its default sweep is 30 s. */
const MAX_SWEEP_MS = 5000;

/**
 * Bounds what one client can hold (README "Timeouts and connection bounds"): a request must arrive within
 * its deadlines, however slowly it trickles, idle keep-alive connections close, and connections past
 * the cap are closed on arrival. Applied before `listen`: Node starts its sweep when the server listens.
 */
export function applyServerLimits(server: Server, limits: ServerLimits): void {
  server.headersTimeout = limits.headersTimeoutSeconds * 1000;
  server.requestTimeout = limits.requestTimeoutSeconds * 1000;
  server.keepAliveTimeout = limits.keepAliveTimeoutSeconds * 1000;
  server.maxConnections = limits.maxConnections;
  // A sweep every half headers deadline cuts a slow client off within 1.5× the deadline.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(MAX_SWEEP_MS, server.headersTimeout / 2);
}
