import { Global, Module } from '@nestjs/common';
import { MetricsServer } from './metrics-server.js';
import { Metrics } from './metrics.js';

/** The application's metrics (injectable everywhere as `Metrics`) and their listener. */
@Global()
@Module({ providers: [Metrics, MetricsServer], exports: [Metrics] })
export class MetricsModule {}
