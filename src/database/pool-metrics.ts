import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { Metrics } from '../common/metrics/metrics.js';

/** `ids_db_pool_connections{state}`: this instance's connection pool, read at scrape time. */
@Injectable()
export class PoolMetrics {
  constructor(@InjectDataSource() dataSource: DataSource, metrics: Metrics) {
    // Registered on construction; the registry calls `collect` on every scrape.
    new Gauge({
      name: 'ids_db_pool_connections',
      help: 'Database pool: connections in use, idle, and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [metrics.registry],
      collect() {
        // TypeORM's postgres driver keeps its pg.Pool as `master`.
        const pool = (dataSource.driver as unknown as { master?: pg.Pool }).master;
        if (!pool) return;
        this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }
}
