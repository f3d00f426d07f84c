import { createServer, type Server } from 'node:http';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { StartupError } from '../startup-error.js';
import { Metrics } from './metrics.js';

/**
 * `GET /metrics` in the Prometheus text format on its own listener (METRICS_PORT), apart from the API: it
 * needs no key and should be reachable only by the scraper. Opened at module init, so that a taken port
 * stops start-up before the bootstrap hooks (an admin key printed); closed last, after the API has drained.
 */
@Injectable()
export class MetricsServer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  async onModuleInit(): Promise<void> {
    const port = this.config.metricsPort;
    if (port === 0) return;
    const server = createServer((request, response) => {
      if (request.url?.split('?')[0] !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
        response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('only GET /metrics is served here\n');
        return;
      }
      this.metrics.registry.metrics().then(
        (text) => response.writeHead(200, { 'Content-Type': this.metrics.registry.contentType }).end(text),
        (error: unknown) => {
          this.logger.error(`collecting metrics failed: ${error instanceof Error ? error.message : String(error)}`);
          response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('collecting metrics failed\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE' || error.code === 'EACCES'
            ? new StartupError(`METRICS_PORT ${port} cannot be used (${error.code}): choose another port, or METRICS_PORT=0 to turn metrics off`)
            : error,
        ),
      );
      server.listen(port, () => resolve());
    });
    this.server = server;
    this.logger.log(`Metrics on http://localhost:${port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
