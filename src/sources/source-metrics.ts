import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../common/metrics/metrics.js';
import { SourceRowsRepository } from './source-rows.repository.js';

/**
 * `ids_source_last_success_timestamp_seconds{source}` and `ids_source_claims{source}` (extensions §13), read
 * from the database at scrape time, since every instance runs sources and they share it.
 */
@Injectable()
export class SourceMetrics {
  constructor(metrics: Metrics, repository: SourceRowsRepository) {
    const rows = () => repository.gauges();
    new Gauge({
      name: 'ids_source_last_success_timestamp_seconds',
      help: 'When each source last ran successfully (Unix time); absent before its first success',
      labelNames: ['source'] as const,
      registers: [metrics.registry],
      async collect() {
        this.reset();
        try {
          for (const row of await rows()) if (row.lastSuccess !== null) this.set({ source: row.name }, row.lastSuccess);
        } catch {
          // Database unreachable: no sample rather than a stale one.
        }
      },
    });
    new Gauge({
      name: 'ids_source_claims',
      help: 'Object keys each source claims now',
      labelNames: ['source'] as const,
      registers: [metrics.registry],
      async collect() {
        this.reset();
        try {
          for (const row of await rows()) this.set({ source: row.name }, row.claims);
        } catch {
          // As above.
        }
      },
    });
  }
}
