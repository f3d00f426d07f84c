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

/** The per-key totals of the keys of object `o` (its `keys` jsonb), joined by primary key. */
const totalsOf = (o: string) =>
  `FROM jsonb_array_elements(${o}.keys) fk JOIN sighting_summary fs ON fs.key_type = fk->>'type' AND fs.key_value = fk->>'value'`;

/**
 * The filter as SQL conditions (each starting with AND) on the object row `o`; `since` names the parameter
 * that carries `sightedSince`. Kept here with the tables they read: listings and exports only embed them.
 * The summaries are lifetime totals (never lowered by roll-up or retention), so a filter does not depend
 * on when it runs, only on what was recorded: see `SIGHTING_VERSION`.
 */
export function sightingConditions(o: string, filter: SightingFilter, since: string): string {
  return (
    (filter.sightedSince === null ? '' : ` AND EXISTS (SELECT ${totalsOf(o)} WHERE fs.last_at >= ${since}::timestamptz)`) +
    (filter.excludeFalsePositives ? ` AND (SELECT coalesce(sum(fs.false_positives), 0) <= coalesce(sum(fs.count), 0) ${totalsOf(o)})` : '')
  );
}

/**
 * A version of every summary at once: the sum of all counts ever recorded, kept in a few rows (a row per
 * shard, so writers seldom wait on one another) and added to in the statement that records. It rises with
 * every request that records anything and never falls, so two snapshots with the same version see the same
 * summaries: the later one sees every recording the earlier one saw, and none more, or the sum would differ.
 * An export filtered by sightings adds it to its ETag.
 */
export const SIGHTING_VERSION = `(SELECT coalesce(sum(total), 0)::text FROM sighting_tally)`;
