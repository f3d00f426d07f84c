import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';

/**
 * The metric families of the service, on a registry of this application's own (tests run several
 * applications in one process; the global registry would refuse the second). Areas count through these
 * fields; families read at scrape time (pool, task queue, long-poll waiters) are registered by their owners on
 * `registry`.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'ids_http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status (aborted: the client left first), with their latency',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly httpRequestsInFlight = new Gauge({
    name: 'ids_http_requests_in_flight',
    help: 'HTTP requests received and not yet answered',
    registers: [this.registry],
  });

  readonly changesWritten = new Counter({
    name: 'ids_changes_written_total',
    help: 'Change records written to the collections\' change feeds, by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  readonly tasksTaken = new Counter({
    name: 'ids_tasks_taken_total',
    help: 'Tasks handed to executors (each delivery counts)',
    registers: [this.registry],
  });

  readonly tasksCompleted = new Counter({
    name: 'ids_tasks_completed_total',
    help: 'Tasks completed by executors',
    registers: [this.registry],
  });

  readonly tasksFailed = new Counter({
    name: 'ids_tasks_failed_total',
    help: 'Tasks reported failed by executors',
    registers: [this.registry],
  });

  readonly uploadedBytes = new Counter({
    name: 'ids_filebox_uploaded_bytes_total',
    help: 'File content bytes stored (direct uploads and session parts)',
    registers: [this.registry],
  });

  readonly downloadedBytes = new Counter({
    name: 'ids_filebox_downloaded_bytes_total',
    help: 'File content bytes sent in downloads',
    registers: [this.registry],
  });

  readonly cacheLookups = new Counter({
    name: 'ids_cache_lookups_total',
    help: 'Lookups in the process caches of database rows, by cache and result (hit or miss)',
    labelNames: ['cache', 'result'] as const,
    registers: [this.registry],
  });

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    // Process metrics (CPU, memory, event loop lag, GC) only when someone can scrape them: they sample continuously.
    if (config.metricsPort !== 0) collectDefaultMetrics({ register: this.registry });
  }
}
