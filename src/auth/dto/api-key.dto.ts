import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { RESOURCE_ACTIONS, type ResourceAction } from '../../common/guard/access.js';
import { IsTlp } from '../../common/markings/tlp-validation.js';
import { TLP_INPUT_HINT, TLP_LEVELS, type Tlp } from '../../common/markings/tlp.js';
import { PageQueryDto } from '../../common/pagination/page.js';
import { RELIABILITIES, type Reliability } from '../../scoring/admiralty.js';

export class ResourceRefDto {
  @ApiProperty({ type: 'integer' })
  @IsInt()
  id: number;
}

export class PermissionDto {
  @ApiProperty({ type: ResourceRefDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => ResourceRefDto)
  resource: ResourceRefDto;

  @ApiProperty({ enum: RESOURCE_ACTIONS, isArray: true })
  @IsArray()
  @ArrayMaxSize(4)
  @IsIn(RESOURCE_ACTIONS, { each: true })
  actions: ResourceAction[];
}

export class LimitTargetDto {
  @ApiProperty({ type: ResourceRefDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => ResourceRefDto)
  resource: ResourceRefDto;

  @ApiProperty({ enum: RESOURCE_ACTIONS })
  @IsIn(RESOURCE_ACTIONS)
  action: ResourceAction;
}

export class RequestLimitDto {
  @ApiProperty({ type: LimitTargetDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => LimitTargetDto)
  target: LimitTargetDto;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Maximum requests per period.' })
  @IsInt()
  limit: number;

  @ApiProperty({ enum: ['Day'] })
  @IsIn(['Day'])
  period: 'Day';
}

/** RFC 3339 with an explicit zone; the SDK sends `YYYY-MM-DDTHH:MM:SSZ`. */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const MAX_TLP_DESCRIPTION =
  `The most restrictive TLP marking the key may read: ${TLP_INPUT_HINT}. Objects marked above it do not exist for ` +
  "the key. Never above the calling key's own (absent at creation: the caller's own, TLP:RED for an unrestricted key).";

const RELIABILITY_DESCRIPTION =
  'How reliable what the key writes is, an Admiralty reliability `A`…`F` (docs/scoring.md): the `api` claim of an object it ' +
  'adds, updates or re-sends counts at least this reliable (the highest among its writers). Default `F`; any key that may ' +
  'create or change keys may set any value. C and F count alike (50), and the view shows such a key as `F`.';

export class CreateApiKeyDto {
  @ApiProperty({ type: [PermissionDto] })
  @IsArray()
  @ArrayMaxSize(1000)
  // ValidateNested passes an item that is itself an array (it validates that array's items): refused here.
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => PermissionDto)
  permissions: PermissionDto[];

  @ApiPropertyOptional({ type: [RequestLimitDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => RequestLimitDto)
  requestLimits?: RequestLimitDto[];

  @ApiPropertyOptional({ type: String, format: 'date-time', example: '2030-01-02T03:04:05Z' })
  @IsOptional()
  @IsString()
  @Matches(TIMESTAMP_PATTERN, { message: 'expiresAt must be an RFC 3339 timestamp with a time zone' })
  expiresAt?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  description?: string;

  @ApiPropertyOptional({
    type: [String],
    minItems: 1,
    maxItems: 100,
    example: ['192.0.2.0/24', '2001:db8::/32'],
    description:
      'IPv4/IPv6 networks (CIDR) the key and its tokens may be used from; absent: anywhere. A request from ' +
      'elsewhere is answered 401, as for an unknown key.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  allowedNetworks?: string[];

  @ApiPropertyOptional({ type: String, example: 'TLP:GREEN', description: MAX_TLP_DESCRIPTION })
  @IsOptional()
  @IsTlp()
  maxTLP?: string;

  @ApiPropertyOptional({ enum: RELIABILITIES, example: 'B', description: RELIABILITY_DESCRIPTION })
  @IsOptional()
  @IsIn(RELIABILITIES)
  reliability?: Reliability;
}

/** `PATCH /auth/keys/{id}`: the members sent change, the others keep their values. */
export class UpdateApiKeyDto {
  @ApiPropertyOptional({ type: String, example: 'TLP:GREEN', description: MAX_TLP_DESCRIPTION })
  @IsOptional()
  @IsTlp()
  maxTLP?: string;

  @ApiPropertyOptional({ enum: RELIABILITIES, example: 'B', description: RELIABILITY_DESCRIPTION })
  @IsOptional()
  @IsIn(RELIABILITIES)
  reliability?: Reliability;
}

export class ListApiKeysQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'Absent: all keys.' })
  @IsOptional()
  @IsIn(['true', 'false'])
  revoked?: 'true' | 'false';

  @ApiPropertyOptional({ description: 'Case-insensitive substring of the description.' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  description?: string;
}

export class ApiKeyIdParamDto {
  @ApiProperty({ type: 'integer' })
  @Matches(/^[1-9]\d{0,9}$/, { message: 'api_key_id must be a positive integer' })
  api_key_id: string;
}

export class ApiKeyRegistrationView {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ description: 'The key value; shown only in this response.' })
  key: string;
}

export class ResourceRefView {
  @ApiProperty({ type: 'integer' })
  id: number;
}

export class PermissionView {
  @ApiProperty({ type: ResourceRefView })
  resource: ResourceRefView;

  @ApiProperty({ enum: RESOURCE_ACTIONS, isArray: true })
  actions: ResourceAction[];
}

export class LimitTargetView {
  @ApiProperty({ type: ResourceRefView })
  resource: ResourceRefView;

  @ApiProperty({ enum: RESOURCE_ACTIONS })
  action: ResourceAction;
}

export class RequestLimitView {
  @ApiProperty({ type: LimitTargetView })
  target: LimitTargetView;

  @ApiProperty({ type: 'integer' })
  limit: number;

  @ApiProperty({ enum: ['Day'] })
  period: 'Day';
}

export class ApiKeyView {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ format: 'date-time' })
  createdAt: Date;

  @ApiPropertyOptional({ format: 'date-time', nullable: true, type: String })
  expiresAt: Date | null;

  @ApiPropertyOptional({ nullable: true, type: String })
  description: string | null;

  @ApiPropertyOptional({ format: 'date-time', nullable: true, type: String })
  lastUsedAt: Date | null;

  @ApiProperty()
  revoked: boolean;

  @ApiProperty({ type: [PermissionView] })
  permissions: PermissionView[];

  @ApiProperty({ type: [RequestLimitView] })
  requestLimits: RequestLimitView[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'The first 8 characters of the key value, to tell keys apart; null for keys made before they were kept, and for the ADMIN_API_KEY key.',
  })
  prefix: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'The client address of the last use (see `lastUsedAt`).' })
  lastUsedAddress: string | null;

  @ApiPropertyOptional({ type: [String], nullable: true, description: 'The networks the key may be used from; null: anywhere.' })
  allowedNetworks: string[] | null;

  @ApiProperty({ enum: TLP_LEVELS, description: 'The most restrictive TLP marking the key may read (objects marked above it do not exist for it).' })
  maxTLP: Tlp;

  @ApiProperty({ enum: RELIABILITIES, description: 'How reliable what the key writes is (Admiralty `A`…`F`; C and F count alike and show as `F`).' })
  reliability: Reliability;
}

export class RequestLimitUsageView extends RequestLimitView {
  @ApiProperty({ type: 'integer', description: 'Requests counted against the limit today (UTC).' })
  used: number;

  @ApiProperty({ type: 'integer' })
  remaining: number;
}

export class ApiKeyUsageView {
  @ApiProperty({ format: 'date', description: 'The UTC day counted.', example: '2030-01-02' })
  day: string;

  @ApiProperty({ type: 'integer', description: 'Seconds until the counts start again (the next UTC midnight).' })
  resetSeconds: number;

  @ApiProperty({ type: [RequestLimitUsageView], description: 'One per request limit of the key, as in `requestLimits`.' })
  requestLimits: RequestLimitUsageView[];
}
