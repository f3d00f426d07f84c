import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { KEY_TYPES, type KeyType } from '../../common/indicators/indicators.js';
import { MAX_INPUT_KEY_LENGTH, ObjectKeyQueryDto } from '../../common/indicators/object-form.dto.js';
import { PageQueryDto } from '../../common/pagination/page.js';
import { DATE_TIME_PATTERN } from '../../common/validation/date-time.js';

export const SIGHTING_KINDS = ['sighting', 'falsePositive'] as const;
export type SightingKind = (typeof SIGHTING_KINDS)[number];
export const SIGHTING_STATUSES = ['Recorded', 'Duplicate', 'Unknown', 'Invalid'] as const;
export type SightingStatus = (typeof SIGHTING_STATUSES)[number];

export const MAX_SIGHTING_ITEMS = 10_000;
export const MAX_SOURCE_LENGTH = 128;
export const MAX_SIGHTING_COUNT = 1_000_000;
/** How far ahead of the service's clock an item's `at` may be (clients' clocks drift). */
export const MAX_CLOCK_AHEAD_MS = 5 * 60 * 1000;

/**
 * One item of `POST /intel/sightings`, for the OpenAPI document only: items are checked one by one by the
 * service, so that a malformed one is that item's `Invalid`, not the request's 400.
 */
export class SightingItemDto {
  @ApiPropertyOptional({ enum: KEY_TYPES, description: 'The key type (with `value`), as the keys of a lookup.' })
  type?: KeyType;

  @ApiPropertyOptional({ maxLength: MAX_INPUT_KEY_LENGTH, description: 'The key (with `type`); normalised as a stored key is.' })
  value?: string;

  @ApiPropertyOptional({ enum: KEY_TYPES, description: 'Instead of `type`: the key type, named as in `DELETE …/objects`.' })
  objectKeyType?: KeyType;

  @ApiPropertyOptional({ maxLength: MAX_INPUT_KEY_LENGTH, description: 'Instead of `value`, with `objectKeyType`.' })
  objectKey?: string;

  @ApiPropertyOptional({ enum: SIGHTING_KINDS, default: 'sighting', description: '`falsePositive`: the hit was benign.' })
  kind?: SightingKind;

  @ApiPropertyOptional({ maxLength: MAX_SOURCE_LENGTH, example: 'siem-eu/fw-17', description: 'Who saw it; default `key/<keyID>` of the caller.' })
  source?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When it was seen (RFC 3339, kept to milliseconds); default now. At most 5 minutes ahead, not older than SIGHTING_RETENTION_DAYS.',
  })
  at?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_SIGHTING_COUNT, default: 1, description: 'How many times it was seen.' })
  count?: number;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'A client id, unique across the service: an item whose id was recorded before (in this request or any earlier one) is a `Duplicate` and not counted again.',
  })
  id?: string;
}

export class SightingResultView {
  @ApiProperty({
    enum: SIGHTING_STATUSES,
    description:
      'Recorded; Duplicate (its `id` was recorded before: not counted again); Unknown (no collection the key may read ' +
      'holds the key: nothing stored); Invalid (see `reason`: nothing stored).',
  })
  status: SightingStatus;

  @ApiPropertyOptional({ description: 'Why the item is Invalid.' })
  reason?: string;
}

export class SightingSummaryView {
  @ApiProperty({ type: 'integer', description: "Sum of the counts of `sighting` items over all the object's keys." })
  count: number;

  @ApiProperty({ type: 'integer', description: 'Sum of the counts of `falsePositive` items.' })
  falsePositives: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'Earliest `sighting` item (null: false positives only).' })
  firstAt: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'Latest `sighting` item (null: false positives only).' })
  lastAt: string | null;

  @ApiProperty({ type: 'integer', description: 'Distinct sources of items of either kind.' })
  sources: number;
}

export class SightingView {
  @ApiProperty({ format: 'date-time', description: "When it was seen; for an hourly roll-up (items older than SIGHTING_RAW_DAYS), the hour's start." })
  at: string;

  @ApiProperty({ enum: SIGHTING_KINDS })
  kind: SightingKind;

  @ApiProperty()
  source: string;

  @ApiProperty({ type: 'integer', description: "The item's count; for a roll-up, the sum of its items." })
  count: number;
}

export class ListSightingsQueryDto extends IntersectionType(PageQueryDto, ObjectKeyQueryDto) {
  @ApiPropertyOptional({ format: 'date-time', description: 'Only sightings at or after this moment (RFC 3339).' })
  @IsOptional()
  @Matches(DATE_TIME_PATTERN, { message: 'since must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only sightings before this moment (RFC 3339).' })
  @IsOptional()
  @Matches(DATE_TIME_PATTERN, { message: 'until must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' })
  until?: string;

  @ApiPropertyOptional({ maxLength: MAX_SOURCE_LENGTH, description: 'Only sightings of this source.' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_SOURCE_LENGTH)
  source?: string;

  @ApiPropertyOptional({ enum: SIGHTING_KINDS, description: 'Only sightings of this kind.' })
  @IsOptional()
  @IsIn(SIGHTING_KINDS)
  kind?: SightingKind;
}
