import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { ObjectKeyQueryDto } from '../../common/indicators/object-form.dto.js';
import { PageQueryDto } from '../../common/pagination/page.js';
import { ScoreAtQueryDto } from '../../read-policy/read-filters.dto.js';
import { SightingSummaryView } from '../../sightings/dto/sighting.dto.js';
import { WarningView } from '../../warninglists/dto/warninglist.dto.js';
import { ObjectView } from '../dto/object.dto.js';
import { CHANGE_OPERATIONS, REMOVE_REASONS, type ChangeOperation, type RemoveReason } from '../entities/change.entity.js';
import { WRITE_VIAS, type WriteVia } from '../write-origin.js';

/** `GET …/objects/history`: the key, paged. */
export class HistoryQueryDto extends IntersectionType(PageQueryDto, ObjectKeyQueryDto) {}

/** One change of an object's history (extensions §14). */
export class HistoryEntryView {
  @ApiProperty({ type: 'integer', description: "The change's position in the collection's feed." })
  position: number;

  @ApiProperty({ format: 'date-time', description: 'When the change was written (UTC, milliseconds).' })
  at: string;

  @ApiProperty({ enum: CHANGE_OPERATIONS })
  operation: ChangeOperation;

  @ApiProperty({ enum: REMOVE_REASONS, nullable: true, description: 'On `Remove`: `Deleted`, `Expired`, `Withdrawn` or `Decayed`; null otherwise.' })
  reason: RemoveReason | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "The key whose request made it; null for the service's jobs, extensions and scheduled source runs.",
  })
  keyID: number | null;

  @ApiProperty({ type: 'string', nullable: true, description: "The request's `X-Request-Id` (as answered and audited), or a job run's id." })
  requestID: string | null;

  @ApiProperty({ enum: WRITE_VIAS, nullable: true, description: 'How it came; null on changes written before attribution was recorded.' })
  via: WriteVia | null;

  @ApiProperty({ type: 'string', nullable: true, description: "The source's name when `via` is `source`." })
  source: string | null;

  @ApiProperty({ type: ObjectView, description: 'The object as this change wrote it (its last state for `Remove`), context whole.' })
  obj: ObjectView;
}

export const CLAIM_ORIGINS = ['api', 'source'] as const;
export type ClaimOrigin = (typeof CLAIM_ORIGINS)[number];

/** Who vouches for an object (extensions §13 "Claims"): the api (native writes) or a source. */
export class ClaimView {
  @ApiProperty({ enum: CLAIM_ORIGINS })
  origin: ClaimOrigin;

  @ApiProperty({ type: 'string', nullable: true, description: "The source's name (origin `source`); null for `api`." })
  source: string | null;

  @ApiProperty({
    format: 'date-time',
    description:
      'When the claim began: the first native write that added or updated the object, or the first run of the source listing it (UTC, milliseconds).',
  })
  firstSeenAt: string;

  @ApiProperty({ format: 'date-time', description: 'The last such write or listing.' })
  lastSeenAt: string;
}

export class ProvenanceView {
  @ApiProperty({ type: [ClaimView], description: 'Every claim on the live object: `api` first, then each source listing it, by name.' })
  claims: ClaimView[];

  @ApiProperty({ type: SightingSummaryView, nullable: true, description: 'Its sighting summary; null when none.' })
  sightings: SightingSummaryView | null;

  @ApiProperty({
    type: [WarningView],
    description: 'The warnings of the enabled warninglists for each key of the object, in key order: a known-benign value; empty when none.',
  })
  warnings: WarningView[];

  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100, description: 'Its score (docs/scoring.md) at `scoreAt` when the request gives one, else now.' })
  score: number;
}

/** `GET …/objects/provenance`: the key, and the time its score is computed at. */
export class ProvenanceQueryDto extends IntersectionType(ObjectKeyQueryDto, ScoreAtQueryDto) {}
