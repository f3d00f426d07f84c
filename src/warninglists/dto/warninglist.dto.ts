import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { KEY_TYPES, type KeyType } from '../../common/indicators/indicators.js';
import { PageQueryDto } from '../../common/pagination/page.js';
import { LIST_ACTIONS, LIST_KINDS, MATCH_KINDS, type ListAction, type ListKind, type MatchKind } from '../warninglist-matcher/index.js';

/** URL-friendly names (extensions §15). */
export const WARNINGLIST_NAME_PATTERN = /^[a-z0-9._-]{1,128}$/;
const NAME_MESSAGE = 'name must be 1-128 of a-z 0-9 . _ -';
export const MAX_LIST_ENTRIES = 1_000_000;
export const MAX_CHECK_VALUES = 100_000;
const MAX_DESCRIPTION = 4096;

const ENTRIES_DESCRIPTION =
  `Up to ${MAX_LIST_ENTRIES.toLocaleString('en')} strings, normalised as keys are. \`values\`: any value (a leading dot ` +
  'on a domain matches it and its subdomains); `cidr`: addresses and CIDR networks (host bits are cleared); ' +
  '`hostname`: domain names (each matches itself and its subdomains); `substring`: text found in domains and URLs.';

const KEY_TYPES_DESCRIPTION =
  'Key types the list is checked against (default: every type its kind fits: values all, cidr IPAddress/IPNetwork/URL, ' +
  'hostname and substring DomainName/URL).';

const ACTION_DESCRIPTION =
  '`annotate`: warnings in lookups and checks; `excludeFromExport`: also left out of exports and TAXII; ' + '`rejectOnIngest`: also refused on writes.';

/**
 * A kind MISP has and lists do not (extensions §15): taken by the body's check so that the service refuses it
 * as unsupported (422 UnsupportedListType, as the MISP import does), not as unknown (400).
 */
export const UNSUPPORTED_KINDS = ['regex'] as const;

/** A list's settings and entries: the body of POST with its name, of PUT with its name or without. */
export class WarninglistBodyDto {
  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION)
  description?: string;

  @ApiProperty({ enum: LIST_KINDS })
  @IsIn([...LIST_KINDS, ...UNSUPPORTED_KINDS], { message: `kind must be one of ${LIST_KINDS.join(', ')}` })
  kind: ListKind | (typeof UNSUPPORTED_KINDS)[number];

  @ApiPropertyOptional({ enum: KEY_TYPES, isArray: true, description: KEY_TYPES_DESCRIPTION })
  @IsOptional()
  @IsArray()
  @IsIn(KEY_TYPES, { each: true, message: `keyTypes must be among ${KEY_TYPES.join(', ')}` })
  keyTypes?: KeyType[];

  @ApiPropertyOptional({ enum: LIST_ACTIONS, description: `${ACTION_DESCRIPTION} Default \`annotate\`.` })
  @IsOptional()
  @IsIn(LIST_ACTIONS, { message: `action must be one of ${LIST_ACTIONS.join(', ')}` })
  action?: ListAction;

  @ApiPropertyOptional({ description: 'Default true.' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiProperty({ type: [String], maxItems: MAX_LIST_ENTRIES, description: ENTRIES_DESCRIPTION })
  @IsArray()
  entries: unknown[];
}

export class CreateWarninglistDto extends WarninglistBodyDto {
  @ApiProperty({ pattern: WARNINGLIST_NAME_PATTERN.source })
  @IsString()
  @Matches(WARNINGLIST_NAME_PATTERN, { message: NAME_MESSAGE })
  name: string;
}

/**
 * PUT's body: the POST form, so that a client can send again the form it created the list with. A name
 * other than the path's is refused by the service (a PUT does not rename), not here: a DTO sees no path.
 */
export class ReplaceWarninglistDto extends WarninglistBodyDto {
  @ApiPropertyOptional({ pattern: WARNINGLIST_NAME_PATTERN.source, description: "The path's name, or left out; another name → 400 `InvalidData`." })
  @IsOptional()
  @IsString()
  name?: string;
}

export class UpdateWarninglistDto {
  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION)
  description?: string;

  @ApiPropertyOptional({ enum: KEY_TYPES, isArray: true, nullable: true, description: `${KEY_TYPES_DESCRIPTION} \`null\`: the default.` })
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsArray()
  @IsIn(KEY_TYPES, { each: true, message: `keyTypes must be among ${KEY_TYPES.join(', ')}` })
  keyTypes?: KeyType[] | null;

  @ApiPropertyOptional({ enum: LIST_ACTIONS, description: ACTION_DESCRIPTION })
  @IsOptional()
  @IsIn(LIST_ACTIONS, { message: `action must be one of ${LIST_ACTIONS.join(', ')}` })
  action?: ListAction;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class WarninglistNameParamDto {
  @ApiProperty({ pattern: WARNINGLIST_NAME_PATTERN.source })
  @Matches(WARNINGLIST_NAME_PATTERN, { message: NAME_MESSAGE })
  name: string;
}

export class ImportWarninglistQueryDto {
  @ApiPropertyOptional({ pattern: WARNINGLIST_NAME_PATTERN.source, description: "Default: the document's `name` made URL-friendly." })
  @IsOptional()
  @Matches(WARNINGLIST_NAME_PATTERN, { message: NAME_MESSAGE })
  name?: string;

  @ApiPropertyOptional({ enum: LIST_ACTIONS, description: `For a new list (default \`annotate\`); an existing list keeps its own.` })
  @IsOptional()
  @IsIn(LIST_ACTIONS, { message: `action must be one of ${LIST_ACTIONS.join(', ')}` })
  action?: ListAction;

  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'For a new list (default true); an existing list keeps its own.' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'enabled must be true or false' })
  enabled?: 'true' | 'false';
}

export class CheckDto {
  @ApiProperty({
    maxItems: MAX_CHECK_VALUES,
    description: 'Values to check, each a string (typed as the lookup types a bare value; defanged forms accepted) or `{type, value}`.',
    type: 'array',
    items: {
      oneOf: [
        { type: 'string' },
        { type: 'object', required: ['type', 'value'], properties: { type: { type: 'string', enum: [...KEY_TYPES] }, value: { type: 'string' } } },
      ],
    },
  })
  @IsArray()
  values: unknown[];
}

export class EntriesQueryDto extends PageQueryDto {}

export class WarningView {
  @ApiProperty({ description: 'The list that matched.' }) list: string;
  @ApiProperty({ description: 'The entry that matched, as stored.' }) entry: string;
  @ApiProperty({ enum: LIST_ACTIONS }) action: ListAction;
  @ApiProperty({
    enum: MATCH_KINDS,
    description: 'exact, subdomain (a parent domain is listed), contained (inside a listed network), overlap (a network holding a listed one), substring.',
  })
  match: MatchKind;
}

export class CheckResultView {
  @ApiProperty({ enum: KEY_TYPES }) type: string;
  @ApiProperty({ description: 'The value, normalised (as sent when it is not a valid key).' }) value: string;
  @ApiProperty({ type: [WarningView] }) warnings: WarningView[];
}

export class WarninglistView {
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: LIST_KINDS }) kind: ListKind;
  @ApiProperty({ enum: KEY_TYPES, isArray: true, description: 'The key types checked (the default of the kind when none were given).' })
  keyTypes: KeyType[];
  @ApiProperty({ enum: LIST_ACTIONS }) action: ListAction;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: 'integer' }) entryCount: number;
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    description: "The MISP document's `version`, for an imported list (null once a PUT replaced its entries).",
  })
  version: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'SHA-256 (hex) of the imported MISP document (null once a PUT replaced its entries).' })
  sha256: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class WarninglistNameView {
  @ApiProperty() name: string;
}
