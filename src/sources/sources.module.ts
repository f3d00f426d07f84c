import { Module } from '@nestjs/common';
import { IntelModule } from '../intel/intel.module.js';
import { SourceClaimsRepository } from './source-claims.repository.js';
import { SourceMetrics } from './source-metrics.js';
import { SourceRowsRepository } from './source-rows.repository.js';
import { SourceRunsRepository } from './source-runs.repository.js';
import { SourceRunsService } from './source-runs.service.js';
import { SourcesController } from './sources.controller.js';
import { SourcesService } from './sources.service.js';

/** Sources (extensions §13): scheduled inbound feeds written through intel's batch path. */
@Module({
  imports: [IntelModule],
  controllers: [SourcesController],
  providers: [SourceRowsRepository, SourceRunsRepository, SourceClaimsRepository, SourcesService, SourceRunsService, SourceMetrics],
  exports: [SourcesService, SourceRunsService],
})
export class SourcesModule {}
