import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the feed server answers on a path: a body with headers, or a handler of its own. */
export type Route =
  { body: string | Buffer; status?: number; headers?: Record<string, string> } | ((request: IncomingMessage, response: ServerResponse) => void);

/**
 * A real HTTP server on the loopback (all interfaces, so 127.0.0.x aliases reach it) serving feeds the
 * test sets per path, recording every request it gets; `ETag`, `304`, redirects and slow bodies are routes.
 */
export class FeedServer {
  readonly routes = new Map<string, Route>();
  readonly requests: { path: string; headers: IncomingMessage['headers'] }[] = [];
  private server!: Server;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      this.requests.push({ path, headers: request.headers });
      const route = this.routes.get(path);
      if (route === undefined) {
        response.writeHead(404).end('not found');
      } else if (typeof route === 'function') {
        route(request, response);
      } else {
        response.writeHead(route.status ?? 200, { 'content-type': 'text/plain', ...route.headers }).end(route.body);
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '0.0.0.0', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** A list served with an ETag, answering a matching If-None-Match with 304. */
  list(path: string, body: string, etag?: string): void {
    this.routes.set(path, (request, response) => {
      if (etag !== undefined && request.headers['if-none-match'] === etag) return void response.writeHead(304).end();
      response.writeHead(200, { 'content-type': 'text/plain', ...(etag !== undefined && { etag }) }).end(body);
    });
  }

  hits(path: string): number {
    return this.requests.filter((request) => request.path === path).length;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
