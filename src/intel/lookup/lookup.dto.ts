import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, Matches, ValidateNested } from 'class-validator';
import { ObjectKeyDto } from '../../common/indicators/object-form.dto.js';
import { DATE_TIME_PATTERN } from '../../common/validation/date-time.js';
import { SightingSummaryView } from '../../sightings/dto/sighting.dto.js';
import { WarningView } from '../../warninglists/dto/warninglist.dto.js';
import { COLLECTION_NAME_PATTERN } from '../dto/collection.dto.js';
import { ObjectKeyView, ScoredObjectView } from '../dto/object.dto.js';

export const MAX_LOOKUP_KEYS = 1000;

export class LookupDto {
  @ApiProperty({ type: [ObjectKeyDto], minItems: 1, maxItems: MAX_LOOKUP_KEYS, description: 'Keys to look up; normalised first.' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_LOOKUP_KEYS)
  @ValidateNested({ each: true })
  @Type(() => ObjectKeyDto)
  keys: ObjectKeyDto[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_LOOKUP_KEYS,
    description:
      'Search only these collections (default: every collection the key may read). A name the key cannot read, or ' +
      'that does not exist, is skipped silently.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_LOOKUP_KEYS)
  @Matches(COLLECTION_NAME_PATTERN, { each: true, message: 'collections must be collection names' })
  collections?: string[];

  @ApiPropertyOptional({ format: 'date-time', description: "The time the found objects' scores are computed at (RFC 3339; default: now)." })
  @IsOptional()
  @Matches(DATE_TIME_PATTERN, { message: 'scoreAt must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' })
  scoreAt?: string;
}

export class LookupErrorView {
  @ApiProperty() code: string;
  @ApiProperty() message: string;
}

export class LookupMatchView {
  @ApiProperty({ description: 'The collection the object is in.' })
  collection: string;

  @ApiProperty({ type: ScoredObjectView })
  object: ScoredObjectView;

  @ApiProperty({
    type: SightingSummaryView,
    nullable: true,
    description: 'The sightings of the object over all its keys (POST /intel/sightings); null when it was never sighted.',
  })
  sightings: SightingSummaryView | null;
}

export class LookupResultView {
  @ApiProperty({ type: ObjectKeyView, description: 'The key, normalised (as sent when it is malformed).' })
  key: ObjectKeyView;

  @ApiPropertyOptional({
    type: LookupErrorView,
    description:
      'Why the key could not be looked up: InvalidKeyFormat, or RequestEntityTooLarge when the matches of the keys before it ' +
      'already fill the answer (PAGE_MAX_BYTES): ask for it again in another request.',
  })
  error?: LookupErrorView;

  @ApiProperty({ type: [LookupMatchView], description: 'Where the key was found, by collection name; empty when nowhere.' })
  matches: LookupMatchView[];

  @ApiProperty({
    type: [WarningView],
    description: 'The enabled warninglists the key is on, whether it was found or not (empty for a malformed key): a known-benign value.',
  })
  warnings: WarningView[];
}
