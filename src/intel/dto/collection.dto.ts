import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import { IsTlp } from '../../common/markings/tlp-validation.js';
import { TLP_INPUT_HINT, TLP_LEVELS, type Tlp } from '../../common/markings/tlp.js';
import { SCHEMA_ID_PATTERN } from '../../schema-registry/dto/schema.dto.js';
import { DECAYED_ACTIONS, DECAYING_TYPES, TAXII_VIEW_ALIAS, type Scoring } from '../../scoring/scoring-config.js';

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

const DECAY_OPENAPI = {
  type: 'object',
  nullable: true,
  required: ['lifetimeDays', 'speed'],
  additionalProperties: false,
  // OpenAPI 3.0: exclusiveMinimum is a flag on minimum.
  properties: {
    lifetimeDays: { type: 'number', minimum: 0, exclusiveMinimum: true },
    speed: { type: 'number', minimum: 0, exclusiveMinimum: true },
  },
} as const;

/** The OpenAPI form of `scoring` (extensions §18), as sent and as shown (shown with every default filled in). */
const SCORING_OPENAPI = {
  type: 'object',
  additionalProperties: false,
  properties: {
    decay: {
      type: 'object',
      additionalProperties: false,
      description: 'Per object type `{lifetimeDays, speed}`, or `null`: the type never decays. Types left out take their defaults.',
      properties: Object.fromEntries(DECAYING_TYPES.map((type) => [type, DECAY_OPENAPI])),
    },
    threshold: { type: 'number', minimum: 0, maximum: 100, description: 'Default 0.' },
    decayedAction: {
      type: 'string',
      enum: [...DECAYED_ACTIONS],
      description: '`expire`: the expiry job removes objects whose score is below `threshold` (a `Remove` with reason `Decayed`). Default `keep`.',
    },
    taxiiViews: {
      type: 'array',
      description: 'Read-only TAXII collections of the objects whose score is at least `minScore`; an alias unique among TAXII collections (409 when taken).',
      items: {
        type: 'object',
        required: ['alias', 'minScore'],
        additionalProperties: false,
        properties: { alias: { type: 'string', pattern: TAXII_VIEW_ALIAS.source }, minScore: { type: 'number', minimum: 0, maximum: 100 } },
      },
    },
  },
};

/** `scoring`: absent = unchanged (PATCH) or the defaults (registration); null = the defaults. Checked by the service (scoringOf). */
const ScoringMember = () =>
  applyDecorators(
    ApiPropertyOptional({
      ...SCORING_OPENAPI,
      nullable: true,
      description:
        'How scores decay in this collection and what they drive (docs/scoring.md). Replaced whole: members left out take their defaults; ' +
        '`null` restores every default.',
    } as never),
    IsOptional(),
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

  @ScoringMember()
  scoring?: unknown;
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

  @ScoringMember()
  scoring?: unknown;
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

  @ApiProperty({ ...SCORING_OPENAPI, description: 'Its scoring (docs/scoring.md), every default filled in.' } as never)
  scoring: Scoring;
}
