import { Module } from '@nestjs/common';
import { SightingSummariesRepository } from './sighting-summaries.repository.js';
import { SightingSummariesService } from './sighting-summaries.service.js';

/**
 * The summary of one object, for the areas that show one (provenance, the console). Apart from
 * SightingsModule because that one builds on the intel area (which keys a caller may sight), while intel
 * shows summaries: two modules keep the dependency one way.
 */
@Module({
  providers: [SightingSummariesRepository, SightingSummariesService],
  exports: [SightingSummariesService],
})
export class SightingSummariesModule {}
