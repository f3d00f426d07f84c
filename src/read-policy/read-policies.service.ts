import { Injectable } from '@nestjs/common';
import { CommonErrors } from '../common/errors/api-error.js';
import type { Principal } from '../common/guard/access.js';
import { rankOf, TLP_INPUT_HINT, type TlpRank } from '../common/markings/tlp.js';
import { parseDateTime } from '../common/validation/date-time.js';
import { sightingFilterOf } from '../sightings/sighting-filter.js';
import { WarninglistMatcherService } from '../warninglists/warninglist-matcher.service.js';
import { MIN_SCORE_PATTERN, type ReadFiltersQueryDto } from './read-filters.dto.js';
import { ReadPolicy, readScopeOf, type ScoreTime, type WarninglistMode } from './read-policy.js';

/** What of a request's query the policy takes: its filters and, for exports and TAXII, the warninglist mode. */
export type ReadQuery = ReadFiltersQueryDto & { warninglists?: WarninglistMode };

/** Builds the read policy of a request (see ReadPolicy): the one place that turns a caller and a query into what it may see. */
@Injectable()
export class ReadPolicies {
  constructor(private readonly warninglists: WarninglistMatcherService) {}

  /** The policy of `principal`'s request with `query` (already validated by its DTO; 400 InvalidQueryArgument for a bad date or score). */
  of(principal: Principal, query: ReadQuery = {}): ReadPolicy {
    const min = minScoreOf(query.minScore);
    return new ReadPolicy(
      readScopeOf(principal),
      { sightings: sightingFilterOf(query), score: min === undefined ? null : { min } },
      ceilingOf(principal, query.maxTLP),
      query.warninglists ?? 'apply',
      () => this.warninglists.current(),
      scoreTimeOf(query.scoreAt),
    );
  }
}

/** A `minScore=` as a number (undefined without one); 400 InvalidQueryArgument unless a number from 0 to 100. TAXII reads it into its walk. */
export function minScoreOf(minScore: string | undefined): number | undefined {
  if (minScore === undefined) return undefined;
  if (!MIN_SCORE_PATTERN.test(minScore)) throw CommonErrors.invalidQuery('minScore must be a number from 0 to 100', { field: 'minScore' });
  return Number(minScore);
}

/** A `scoreAt=` as the time scores are computed at, else the time now; 400 InvalidQueryArgument for a malformed date-time. */
export function scoreTimeOf(scoreAt: string | undefined): ScoreTime {
  if (scoreAt === undefined) return { at: new Date().toISOString(), asked: false };
  const at = parseDateTime(scoreAt);
  if (!at) throw CommonErrors.invalidQuery('scoreAt must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z', { field: 'scoreAt' });
  return { at: at.toISOString(), asked: true };
}

/** The key's ceiling, narrowed (never widened) by a `maxTLP=` of the query; 400 InvalidData for a spelling that is no TLP level. */
export function ceilingOf(principal: Principal, maxTLP: string | undefined): TlpRank {
  const asked = askedCeiling(maxTLP);
  return asked === undefined ? principal.maxTlp : (Math.min(asked, principal.maxTlp) as TlpRank);
}

/** The level a `maxTLP=` names (undefined without one); 400 InvalidData for a spelling that is no TLP level. TAXII reads it into its walk. */
export function askedCeiling(maxTLP: string | undefined): TlpRank | undefined {
  if (maxTLP === undefined) return undefined;
  const asked = rankOf(maxTLP);
  if (asked === undefined) throw CommonErrors.invalidData(`maxTLP must be ${TLP_INPUT_HINT}`, { field: 'maxTLP' });
  return asked;
}
