import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { WaitQuery } from '../../common/http/long-poll.js';
import { KEY_TYPES, OBJECT_TYPES, type KeyType, type ObjectType } from '../../common/indicators/indicators.js';
import { ObjectFormDto, ObjectKeyQueryDto } from '../../common/indicators/object-form.dto.js';
import { TLP_INPUT_HINT, TLP_LEVELS, type Tlp } from '../../common/markings/tlp.js';
import { PageQueryDto } from '../../common/pagination/page.js';
import { DATE_TIME_PATTERN } from '../../common/validation/date-time.js';
import { ReadFiltersQueryDto } from '../../read-policy/read-filters.dto.js';
import { CHANGE_OPERATIONS, FEED_REMOVE_REASONS, type ChangeOperation, type FeedRemoveReason } from '../entities/change.entity.js';
import { COLLECTION_NAME_PATTERN } from './collection.dto.js';

export class CollectionIdParamDto {
  @ApiProperty({ pattern: COLLECTION_NAME_PATTERN.source, description: 'The collection name.' })
  @Matches(COLLECTION_NAME_PATTERN, { message: 'collection_id must be a collection name' })
  collection_id: string;
}

/** `GET .../objects`: a page, optionally of sighted objects only (extensions §14). */
export class ListObjectsQueryDto extends IntersectionType(PageQueryDto, ReadFiltersQueryDto) {}

/** The object to delete, named by one of its keys (wire-contract §7.4: query, not body). */
export class DeleteObjectQueryDto extends ObjectKeyQueryDto {}

/**
 * The marking of a native write (extensions §19), a query parameter of single add, batch and import. Checked
 * by the service (`tlpParameter`): a bad spelling is 400 InvalidData naming `tlp`, as the spec has it, not the
 * pipe's InvalidQueryArgument.
 */
export class WriteMarkingQueryDto {
  @ApiPropertyOptional({
    type: 'string',
    example: 'TLP:AMBER',
    description:
      `The marking of what this request writes: ${TLP_INPUT_HINT}. It becomes the marking of the objects' api claim ` +
      "(a later write may lower it); an object's marking is the most restrictive of its claims'. Absent: the " +
      "collection's `defaultTLP`. Re-sending an object with another marking is an `Update`.",
  })
  @IsOptional()
  tlp?: string;
}

/** The body of `POST .../objects`: the indicator object form plus its optional expiry. */
export class ObjectAddDto extends ObjectFormDto {
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    format: 'date-time',
    example: '2030-01-01T00:00:00Z',
    description:
      'When the object expires (RFC 3339 with `Z` or an offset; kept to milliseconds); must be in the future. ' +
      "Absent or null: the collection's `objectTTLSeconds` after this add, or never.",
  })
  @IsOptional()
  @IsString()
  @Matches(DATE_TIME_PATTERN, { message: 'expiresAt must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' })
  expiresAt?: string | null;
}

export class ObjectKeyView {
  @ApiProperty({ enum: KEY_TYPES })
  type: KeyType;

  @ApiProperty()
  value: string;
}

export class ObjectView {
  @ApiProperty({ enum: OBJECT_TYPES })
  type: ObjectType;

  @ApiProperty({ type: [ObjectKeyView] })
  keys: ObjectKeyView[];

  @ApiProperty({ type: 'object', additionalProperties: true })
  context: Record<string, unknown>;

  @ApiPropertyOptional({
    format: 'date-time',
    description: "When the object expires (UTC, milliseconds): its own `expiresAt`, or the collection's `objectTTLSeconds` after its last add. Absent: never.",
  })
  expiresAt?: string;

  @ApiProperty({ enum: TLP_LEVELS, description: "The object's TLP marking: the most restrictive among its live claims." })
  tlp: Tlp;
}

/** A live object as listings, lookups and provenance show it: with its score (extensions §18), which moves with time. */
export class ScoredObjectView extends ObjectView {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 100,
    description: 'Its score at `scoreAt` when the request gives one, else at the time of the request.',
  })
  score: number;
}

export class ObjectChangeView {
  @ApiProperty({ enum: CHANGE_OPERATIONS })
  operation: ChangeOperation;

  @ApiProperty({ type: ObjectView, description: 'The object after the change; its last state for `Remove`.' })
  object: ObjectView;

  @ApiPropertyOptional({
    enum: FEED_REMOVE_REASONS,
    description:
      'On `Remove` only: `Deleted` (an explicit delete), `Expired` (removed at its expiry), `Withdrawn` (its last claim ended) or ' +
      "`Restricted` (marked above the key's `maxTLP` from this change on; the object as the key last saw it).",
  })
  reason?: FeedRemoveReason;
}

/** The feed query: `cursor` is required (400 InvalidQueryArgument when missing or empty). */
export class ChangesQueryDto extends PageQueryDto {
  @ApiProperty({
    required: true,
    description: 'Feed position: `rel="related"` of the first listing page, then `rel="next"` of the previous changes page.',
  })
  declare cursor?: string;

  @WaitQuery()
  wait?: string;
}

export const LISTING_LINK_HEADER = {
  Link: {
    description:
      '`<...objects?cursor=...&limit=...>; rel="next"` while more pages exist; on the first page (no `cursor`) also ' +
      '`</intel/collections/{collection_id}/objects/changes?cursor=<changes cursor>>; rel="related"`, the feed ' +
      'position of the snapshot that page was read in.',
    schema: { type: 'string' },
  },
};

export const CHANGES_LINK_HEADER = {
  Link: {
    description:
      '`<...changes?cursor=...&limit=...>; rel="next"` (the position after the last change) on every non-empty page; ' +
      'absent on an empty page: keep the previous cursor and ask again later.',
    schema: { type: 'string' },
  },
};
