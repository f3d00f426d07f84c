import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ObjectKeyQueryDto } from '../../common/indicators/object-form.dto.js';
import { DATE_TIME_PATTERN } from '../../common/validation/date-time.js';
import { RELIABILITIES, type Reliability } from '../admiralty.js';

export const MAX_OVERRIDE_REASON_LENGTH = 1024;

/** `GET …/objects/score`: the object by one of its keys, and the moment to evaluate at. */
export class ScoreQueryDto extends ObjectKeyQueryDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'The moment the current inputs are evaluated at (RFC 3339, any time, past or future; kept to milliseconds). Default: now.',
  })
  @IsOptional()
  @Matches(DATE_TIME_PATTERN, { message: 'at must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' })
  at?: string;
}

/** `PUT …/objects/score`: the score an analyst sets (extensions §18 "Override"). */
export class ScoreOverrideDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 100,
    description: 'The score the object has while the override holds (no decay, no false-positive factor).',
  })
  @IsInt({ message: 'score must be an integer from 0 to 100' })
  @Min(0, { message: 'score must be an integer from 0 to 100' })
  @Max(100, { message: 'score must be an integer from 0 to 100' })
  score: number;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    format: 'date-time',
    example: '2030-01-01T00:00:00Z',
    description: 'When the override ends (RFC 3339, in the future; kept to milliseconds). Absent or null: until deleted or the end of the object.',
  })
  @IsOptional()
  @IsString()
  @Matches(DATE_TIME_PATTERN, { message: 'until must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' })
  until?: string | null;

  @ApiProperty({ minLength: 1, maxLength: MAX_OVERRIDE_REASON_LENGTH, description: 'Why the score is set by hand (shown with the explanation).' })
  @IsString()
  @MinLength(1, { message: 'reason must not be empty' })
  @MaxLength(MAX_OVERRIDE_REASON_LENGTH)
  reason: string;
}

export const CLAIM_ORIGINS = ['api', 'source'] as const;
export type ClaimOrigin = (typeof CLAIM_ORIGINS)[number];

/** One live claim as the score counts it: a source's claims on the object's keys count once, at their strongest. */
export class ScoreClaimView {
  @ApiProperty({ enum: CLAIM_ORIGINS })
  origin: ClaimOrigin;

  @ApiProperty({ type: 'string', nullable: true, description: "The source's name (origin `source`); null for `api`." })
  source: string | null;

  @ApiProperty({ enum: RELIABILITIES, description: "The source's (or, for `api`, the highest among its writers' keys') reliability." })
  reliability: Reliability;

  @ApiProperty({
    type: 'integer',
    description: 'The credibility, `1`…`6`; a `percent` credibility no digit stands for as its number (0..100). `6` for `api`.',
  })
  credibility: number;

  @ApiProperty({ description: '(reliability + credibility) / 2, each as its value (A/1 100 … E/5 0, F/6 50).' })
  strength: number;

  @ApiProperty({ format: 'date-time', description: 'The last native write or listing of the claim (UTC, milliseconds).' })
  lastSeenAt: string;
}

export class ScoreSightingsView {
  @ApiProperty({ type: 'integer', description: 'Sightings over all the keys of the object.' })
  count: number;

  @ApiProperty({ type: 'integer' })
  falsePositives: number;
}

export class ScoreOverrideView {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100 })
  score: number;

  @ApiProperty({ type: 'string', nullable: true, format: 'date-time', description: 'When it ends; null: until deleted or the end of the object.' })
  until: string | null;

  @ApiProperty()
  reason: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The key that set it.' })
  keyID: number | null;
}

export const ANCHORS = ['claim', 'sighting'] as const;
export type Anchor = (typeof ANCHORS)[number];

/** Why an object has its score at a moment (extensions §18 "Explanation"). */
export class ScoreExplanationView {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100, description: 'The score at `at`, as every filter compares it.' })
  score: number;

  @ApiProperty({ format: 'date-time', description: 'The moment evaluated (UTC, milliseconds).' })
  at: string;

  @ApiProperty({ description: '100 × (1 − Π(1 − strength / 100)) over the live claims.' })
  base: number;

  @ApiProperty({ description: 'The false-positive factor: (count + 1) / (count + falsePositives + 1).' })
  fp: number;

  @ApiProperty({ description: 'The decay factor at `at` (1 without decay or at the anchor).' })
  decay: number;

  @ApiProperty({ format: 'date-time', description: "The anchor of the decay: the latest claim's lastSeenAt or the last sighting." })
  anchorAt: string;

  @ApiProperty({ enum: ANCHORS, description: 'Which input set the anchor.' })
  anchor: Anchor;

  @ApiProperty({ type: 'number', nullable: true, description: "The decay's lifetime for the object's type in its collection; null: it never decays." })
  lifetimeDays: number | null;

  @ApiProperty({ type: 'number', nullable: true, description: "The decay's speed; null: it never decays." })
  speed: number | null;

  @ApiProperty({ type: 'integer', description: "The collection's threshold." })
  threshold: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    format: 'date-time',
    description: 'When (at or after `at`) the score is below `threshold` with the inputs as they are; null if never.',
  })
  belowThresholdAt: string | null;

  @ApiProperty({ type: [ScoreClaimView], description: 'The live claims: `api` first, then the sources by name.' })
  claims: ScoreClaimView[];

  @ApiProperty({ type: ScoreSightingsView })
  sightings: ScoreSightingsView;

  @ApiProperty({
    type: ScoreOverrideView,
    nullable: true,
    description: 'The stored override (it sets the score only while `at` is before its `until`); null when none.',
  })
  override: ScoreOverrideView | null;
}
