import { Injectable } from '@nestjs/common';
import type { ObjectKey } from '../common/indicators/indicators.js';
import type { SightingSummaryView } from './dto/sighting.dto.js';
import { SightingSummariesRepository } from './sighting-summaries.repository.js';

/**
 * Summaries of objects for the areas that show one object (provenance, the console): exported by
 * SightingSummariesModule, which needs nothing of the intel area, so intel can import it.
 */
@Injectable()
export class SightingSummariesService {
  constructor(private readonly repository: SightingSummariesRepository) {}

  /** The summary of one object by its keys (for `…/objects/provenance`); null when never sighted. */
  summaryOf(keys: readonly ObjectKey[]): Promise<SightingSummaryView | null> {
    return this.repository.summaryOf(keys);
  }
}
