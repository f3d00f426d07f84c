import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { SCHEMA_ID_PATTERN } from '../../schema-registry/dto/schema.dto.js';

/**
 * URL-safe, since the SDK puts the name into paths as-is. `.` and `..` are refused too: they are dot
 * segments, which URL normalisation removes, so such a collection could never be addressed.
 */
export const COLLECTION_NAME_PATTERN = /^(?!\.\.?$)[A-Za-z0-9._~-]{1,128}$/;
const NAME_MESSAGE = 'must be 1-128 URL-safe characters (A-Z a-z 0-9 . _ ~ -), not "." or ".."';

export class CreateCollectionDto {
  @ApiProperty({ pattern: COLLECTION_NAME_PATTERN.source })
  @IsString()
  @Matches(COLLECTION_NAME_PATTERN, { message: `name ${NAME_MESSAGE}` })
  name: string;

  @ApiProperty({ description: 'An intel schema.' })
  @IsString()
  @Matches(SCHEMA_ID_PATTERN, { message: 'schemaID must be a schema identifier' })
  schemaID: string;
}

export class UpdateCollectionDto {
  @ApiPropertyOptional({ description: 'An intel schema; absent (the SDK sends `{}`) changes nothing.' })
  @IsOptional()
  @IsString()
  @Matches(SCHEMA_ID_PATTERN, { message: 'schemaID must be a schema identifier' })
  schemaID?: string;
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
}
