import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { KEY_TYPES, type KeyType, OBJECT_TYPES, type ObjectType } from '../../common/indicators/indicators.js';
import { MAX_INPUT_KEY_LENGTH } from '../../common/indicators/object-form.dto.js';
import { CHANGE_OPERATIONS, type ChangeOperation } from '../entities/change.entity.js';
import { COLLECTION_NAME_PATTERN } from './collection.dto.js';

export class CollectionIdParamDto {
  @ApiProperty({ pattern: COLLECTION_NAME_PATTERN.source, description: 'The collection name.' })
  @Matches(COLLECTION_NAME_PATTERN, { message: 'collection_id must be a collection name' })
  collection_id: string;
}

/** The object to delete, named by one of its keys (wire-contract §7.4: query, not body). */
export class DeleteObjectQueryDto {
  @ApiProperty({ enum: KEY_TYPES })
  @IsIn(KEY_TYPES)
  objectKeyType: KeyType;

  @ApiProperty({ maxLength: MAX_INPUT_KEY_LENGTH, description: 'The key value; normalised like a submitted key.' })
  @IsString()
  @MaxLength(MAX_INPUT_KEY_LENGTH)
  objectKey: string;
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
}

export class ObjectChangeView {
  @ApiProperty({ enum: CHANGE_OPERATIONS })
  operation: ChangeOperation;

  @ApiProperty({ type: ObjectView, description: 'The object after the change; its last state for `Remove`.' })
  object: ObjectView;
}
