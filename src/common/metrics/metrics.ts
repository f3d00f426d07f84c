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

  /** A counter family on this application's registry. */
  private counter<Label extends string = never>(name: string, help: string, labelNames: readonly Label[] = []): Counter<Label> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

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

  readonly changesWritten = this.counter('ids_changes_written_total', "Change records written to the collections' change feeds, by operation", [
    'operation',
  ] as const);

  readonly tasksTaken = this.counter('ids_tasks_taken_total', 'Tasks handed to executors (each delivery counts)');

  readonly tasksCompleted = this.counter('ids_tasks_completed_total', 'Tasks completed by executors');

  readonly tasksFailed = this.counter('ids_tasks_failed_total', 'Tasks reported failed by executors');

  readonly uploadedBytes = this.counter('ids_filebox_uploaded_bytes_total', 'File content bytes stored (direct uploads and session parts)');

  readonly downloadedBytes = this.counter('ids_filebox_downloaded_bytes_total', 'File content bytes sent in downloads');

  /** Runs of sources by outcome (extensions §13), counted by the instance that ran them. */
  readonly sourceRuns = this.counter('ids_source_runs_total', 'Runs of sources, by source and outcome', ['source', 'outcome'] as const);

  readonly cacheLookups = this.counter('ids_cache_lookups_total', 'Lookups in the process caches of database rows, by cache and result (hit or miss)', [
    'cache',
    'result',
  ] as const);

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    // Process metrics (CPU, memory, event loop lag, GC) only when someone can scrape them: they sample continuously.
    if (config.metricsPort !== 0) collectDefaultMetrics({ register: this.registry });
  }
}
