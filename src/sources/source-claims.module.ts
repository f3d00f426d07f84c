import { Module } from '@nestjs/common';
import { SourceClaimsRepository } from './source-claims.repository.js';
import { SourceClaimsService } from './source-claims.service.js';

/**
 * The claims of sources on one object, for provenance. Apart from SourcesModule because that one builds on
 * the intel area (runs write through its batch path) while intel shows the claims: two modules keep the
 * dependency one way, as SightingSummariesModule does.
 */
@Module({
  providers: [SourceClaimsRepository, SourceClaimsService],
  exports: [SourceClaimsService],
})
export class SourceClaimsModule {}
