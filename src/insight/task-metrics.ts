import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../common/metrics/metrics.js';
import { TasksRepository } from './tasks.repository.js';

/** `ids_tasks{state}`: the open tasks, counted in the database at scrape time (several instances share it). */
@Injectable()
export class TaskMetrics {
  constructor(metrics: Metrics, tasks: TasksRepository) {
    // Registered on construction; the registry calls `collect` on every scrape.
    new Gauge({
      name: 'ids_tasks',
      help: 'Open tasks by state: pending (waiting to be taken) or leased (taken, lease running)',
      labelNames: ['state'] as const,
      registers: [metrics.registry],
      async collect() {
        this.reset();
        try {
          const counts = await tasks.countOpen();
          this.set({ state: 'pending' }, counts.pending);
          this.set({ state: 'leased' }, counts.leased);
        } catch {
          // Database unreachable: no sample rather than a stale one (GET /health/ready reports the cause).
        }
      },
    });
  }
}
