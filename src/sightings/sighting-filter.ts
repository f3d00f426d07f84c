import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { CommonErrors } from '../common/errors/api-error.js';
import { DATE_TIME_PATTERN, parseDateTime } from '../common/validation/date-time.js';

/** The sighting filters of object listings and exports, as parsed. */
export interface SightingFilter {
  /** ISO 8601: only objects with a `sighting` item at or after it. */
  sightedSince: string | null;
  /** Leave out objects whose false positives exceed their sightings. */
  excludeFalsePositives: boolean;
}

export const NO_SIGHTING_FILTER: SightingFilter = { sightedSince: null, excludeFalsePositives: false };

/** The query members of the filters (listings and exports mix them into their query DTOs). */
export class SightingFilterQueryDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'Only objects with a sighting (not a false positive) at or after this moment (RFC 3339).' })
  @IsOptional()
  @Matches(DATE_TIME_PATTERN, { message: 'sightedSince must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' })
  sightedSince?: string;

  @ApiPropertyOptional({ enum: ['true', 'false'], description: '`true`: leave out objects whose false positives exceed their sightings.' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'excludeFalsePositives must be true or false' })
  excludeFalsePositives?: 'true' | 'false';
}

export function sightingFilterOf(query: SightingFilterQueryDto): SightingFilter {
  let sightedSince: string | null = null;
  if (query.sightedSince !== undefined) {
    const at = parseDateTime(query.sightedSince);
    if (!at) throw CommonErrors.invalidQuery('sightedSince is not a valid date-time');
    sightedSince = at.toISOString();
  }
  return { sightedSince, excludeFalsePositives: query.excludeFalsePositives === 'true' };
}

export const isFiltered = (filter: SightingFilter) => filter.sightedSince !== null || filter.excludeFalsePositives;
