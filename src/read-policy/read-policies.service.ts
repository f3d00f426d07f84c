import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/guard/access.js';
import { sightingFilterOf } from '../sightings/sighting-filter.js';
import { WarninglistMatcherService } from '../warninglists/warninglist-matcher.service.js';
import type { ReadFiltersQueryDto } from './read-filters.dto.js';
import { ReadPolicy, readScopeOf, type WarninglistMode } from './read-policy.js';

/** What of a request's query the policy takes: its filters and, for exports and TAXII, the warninglist mode. */
export type ReadQuery = ReadFiltersQueryDto & { warninglists?: WarninglistMode };

/** Builds the read policy of a request (see ReadPolicy): the one place that turns a caller and a query into what it may see. */
@Injectable()
export class ReadPolicies {
  constructor(private readonly warninglists: WarninglistMatcherService) {}

  /** The policy of `principal`'s request with `query` (already validated by its DTO; 400 InvalidQueryArgument for a bad date). */
  of(principal: Principal, query: ReadQuery = {}): ReadPolicy {
    return new ReadPolicy(readScopeOf(principal), { sightings: sightingFilterOf(query) }, query.warninglists ?? 'apply', () => this.warninglists.current());
  }
}
