import { Module } from '@nestjs/common';
import { IntelModule } from '../intel/intel.module.js';
import { SightingRollupService } from './sighting-rollup.service.js';
import { SightingsController } from './sightings.controller.js';
import { SightingsRepository } from './sightings.repository.js';
import { SightingsService } from './sightings.service.js';

/** Sightings (extensions §14): recorded for keys the caller may look up (IntelModule's LookupService). */
@Module({
  imports: [IntelModule],
  controllers: [SightingsController],
  providers: [SightingsRepository, SightingsService, SightingRollupService],
})
export class SightingsModule {}
