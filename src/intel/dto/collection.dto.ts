import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import { IsTlp } from '../../common/markings/tlp-validation.js';
import { TLP_INPUT_HINT, TLP_LEVELS, type Tlp } from '../../common/markings/tlp.js';
import { SCHEMA_ID_PATTERN } from '../../schema-registry/dto/schema.dto.js';

/**
 * URL-safe, since the SDK puts the name into paths as-is. `.` and `..` are refused too: they are dot
 * segments, which URL normalisation removes, so such a collection could never be addressed.
 */
export const COLLECTION_NAME_PATTERN = /^(?!\.\.?$)[A-Za-z0-9._~-]{1,128}$/;
const NAME_MESSAGE = 'must be 1-128 URL-safe characters (A-Z a-z 0-9 . _ ~ -), not "." or ".."';

/** The largest time to live: the column is a 32-bit integer (about 68 years). */
const MAX_TTL_SECONDS = 2_147_483_647;
const TTL_MESSAGE = `objectTTLSeconds must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS}, or null`;

/** `objectTTLSeconds`: absent = unchanged (PATCH) or none (registration); null = none. */
const ObjectTtlSeconds = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      maximum: MAX_TTL_SECONDS,
      nullable: true,
      description:
        'Objects added without their own `expiresAt` expire this many seconds after their last add or update. ' +
        'Applies to writes made after it is set; `null` removes it.',
    }),
    ValidateIf((_, value) => value !== undefined && value !== null),
    IsInt({ message: TTL_MESSAGE }),
    Min(1, { message: TTL_MESSAGE }),
    Max(MAX_TTL_SECONDS, { message: TTL_MESSAGE }),
  );

/** `defaultTLP`: absent = unchanged (PATCH) or `TLP:CLEAR` (registration). */
const DefaultTlp = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      example: 'TLP:AMBER',
      description:
        'The marking of native writes (single add, batch, import, TAXII) that name none: ' +
        `${TLP_INPUT_HINT}. Marks the writes made after it is set, never the objects already stored. Default \`TLP:CLEAR\`.`,
    }),
    // null is no marking: refused as any other value that is not one.
    ValidateIf((_, value) => value !== undefined),
    IsTlp(),
  );

export class CreateCollectionDto {
  @ApiProperty({ pattern: COLLECTION_NAME_PATTERN.source })
  @IsString()
  @Matches(COLLECTION_NAME_PATTERN, { message: `name ${NAME_MESSAGE}` })
  name: string;

  @ApiProperty({ description: 'An intel schema.' })
  @IsString()
  @Matches(SCHEMA_ID_PATTERN, { message: 'schemaID must be a schema identifier' })
  schemaID: string;

  @ObjectTtlSeconds()
  objectTTLSeconds?: number | null;

  @DefaultTlp()
  defaultTLP?: string;
}

export class UpdateCollectionDto {
  @ApiPropertyOptional({ description: 'An intel schema; absent (the SDK sends `{}`) changes nothing.' })
  @IsOptional()
  @IsString()
  @Matches(SCHEMA_ID_PATTERN, { message: 'schemaID must be a schema identifier' })
  schemaID?: string;

  @ObjectTtlSeconds()
  objectTTLSeconds?: number | null;

  @DefaultTlp()
  defaultTLP?: string;
}

export class CollectionNameParamDto {
  @ApiProperty({ pattern: COLLECTION_NAME_PATTERN.source })
  @Matches(COLLECTION_NAME_PATTERN, { message: `collectionName ${NAME_MESSAGE}` })
  collectionName: string;
}

export class CollectionRegistrationView {
  @ApiProperty()
  name: string;
}

export class CollectionView {
  @ApiProperty()
  name: string;

  @ApiProperty()
  schemaID: string;

  @ApiPropertyOptional({ type: 'integer', description: 'The time to live of objects without their own `expiresAt`; absent: none.' })
  objectTTLSeconds?: number;

  @ApiProperty({ enum: TLP_LEVELS, description: 'The marking of native writes that name none.' })
  defaultTLP: Tlp;
}
