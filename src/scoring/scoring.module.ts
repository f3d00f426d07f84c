import { Module } from '@nestjs/common';
import { IntelModule } from '../intel/intel.module.js';
import { ReadPolicyModule } from '../read-policy/read-policy.module.js';
import { ScoringController } from './scoring.controller.js';
import { ScoringRepository } from './scoring.repository.js';
import { ScoringService } from './scoring.service.js';

/**
 * Scores explained and overridden (extensions §18). IntelModule for the collections, ReadPolicyModule for the
 * read policy every object read takes. ScoringService for the web console's score badges and explanation.
 */
@Module({
  imports: [IntelModule, ReadPolicyModule],
  controllers: [ScoringController],
  providers: [ScoringRepository, ScoringService],
  exports: [ScoringService],
})
export class ScoringModule {}
