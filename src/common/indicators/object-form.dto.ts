import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsString, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import { KEY_TYPES, OBJECT_TYPES, type KeyType, type ObjectType } from './indicators.js';

/** Longest key value accepted on input (before normalisation, which may still refuse it). */
export const MAX_INPUT_KEY_LENGTH = 4096;

export class ObjectKeyDto {
  @ApiProperty({ enum: KEY_TYPES })
  @IsIn(KEY_TYPES)
  type: KeyType;

  @ApiProperty({ maxLength: MAX_INPUT_KEY_LENGTH, example: '627fcdb6cc9a5e16d657ca6cdef0a6bb' })
  @IsString()
  @MaxLength(MAX_INPUT_KEY_LENGTH)
  value: string;
}

/** An object named by one of its keys in a query (wire-contract §7.4): `DELETE …/objects`, its history, its sightings. */
export class ObjectKeyQueryDto {
  @ApiProperty({ enum: KEY_TYPES })
  @IsIn(KEY_TYPES)
  objectKeyType: KeyType;

  @ApiProperty({ maxLength: MAX_INPUT_KEY_LENGTH, description: 'The key value; normalised like a submitted key.' })
  @IsString()
  @MaxLength(MAX_INPUT_KEY_LENGTH)
  objectKey: string;
}

/** An indicator object as submitted: the body of `POST .../objects` and of a task result. */
export class ObjectFormDto {
  @ApiProperty({ enum: OBJECT_TYPES })
  @IsIn(OBJECT_TYPES)
  type: ObjectType;

  @ApiProperty({ type: [ObjectKeyDto] })
  @IsArray()
  @ArrayMaxSize(64)
  @ValidateNested({ each: true })
  @Type(() => ObjectKeyDto)
  keys: ObjectKeyDto[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Defaults to `{}`.' })
  // The context as parsed: class-transformer's own copy silently drops, at any depth, every attribute named
  // like an Object.prototype method (`toString`, `valueOf`, `hasOwnProperty`, ...). `__proto__`,
  // `constructor` and `prototype` are refused by the global pipe: see RESERVED_ATTRIBUTE_NAMES.
  @Transform(({ obj }: { obj: Record<string, unknown> }) => obj.context, { toClassOnly: true })
  @ValidateIf((form: ObjectFormDto) => form.context !== undefined)
  @IsObject({ message: 'context must be a JSON object' })
  context: Record<string, unknown> = {};
}
