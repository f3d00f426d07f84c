import { Module } from '@nestjs/common';
import { IntelReadsModule } from '../intel/intel-reads.module.js';
import { ReadPolicyModule } from '../read-policy/read-policy.module.js';
import { SightingRollupService } from './sighting-rollup.service.js';
import { SightingSummariesModule } from './sighting-summaries.module.js';
import { SightingsController } from './sightings.controller.js';
import { SightingsRepository } from './sightings.repository.js';
import { SightingsService } from './sightings.service.js';

/**
 * Sightings (extensions §14): recorded for keys the caller may look up (IntelReadsModule's LookupService).
 * The summary of one object is SightingSummariesModule's (no dependency on intel, so the areas that show
 * objects import it); lookup answers embed its SQL (sightingSummarySql) in their one statement.
 */
@Module({
  imports: [IntelReadsModule, ReadPolicyModule, SightingSummariesModule],
  controllers: [SightingsController],
  providers: [SightingsRepository, SightingsService, SightingRollupService],
  // The console lists an object's latest sightings through it.
  exports: [SightingsService],
})
export class SightingsModule {}
