import { ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { DATE_TIME_PATTERN } from '../common/validation/date-time.js';
import { SightingFilterQueryDto } from '../sightings/sighting-filter.js';

/** `minScore=`: a number from 0 to 100 (decimals allowed; scores are integers, so 50.5 keeps those of 51 and more). */
export const MIN_SCORE_PATTERN = /^(?:100(?:\.0+)?|\d{1,2}(?:\.\d+)?)$/;

/** `scoreAt=`: the time scores are computed at (extensions §18), for the reads that show or filter by them. */
export class ScoreAtQueryDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'The time scores are computed at (RFC 3339; default: the time of the request).' })
  @IsOptional()
  @Matches(DATE_TIME_PATTERN, { message: 'scoreAt must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' })
  scoreAt?: string;
}

/**
 * The query members of the read policy's rules, mixed into the query DTOs of the reads that take them
 * (listings, exports): the sighting filters, `maxTLP`, which narrows the key's ceiling (never widens it), and
 * `minScore` with `scoreAt`.
 */
export class ReadFiltersQueryDto extends IntersectionType(SightingFilterQueryDto, ScoreAtQueryDto) {
  @ApiPropertyOptional({ description: "Leave out objects marked above this TLP level (narrows the key's maxTLP; never widens it)." })
  @IsOptional()
  @IsString()
  maxTLP?: string;

  @ApiPropertyOptional({ type: 'number', minimum: 0, maximum: 100, description: 'Only objects whose score at `scoreAt` is at least this (0..100).' })
  @IsOptional()
  @Matches(MIN_SCORE_PATTERN, { message: 'minScore must be a number from 0 to 100' })
  minScore?: string;
}
