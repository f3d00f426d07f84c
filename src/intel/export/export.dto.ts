import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { KEY_TYPES, type KeyType } from '../../common/indicators/indicators.js';
import { TLP_LEVELS } from '../../common/markings/tlp.js';
import { ReadFiltersQueryDto } from '../../read-policy/read-filters.dto.js';
import { WARNINGLIST_MODES, type WarninglistMode } from '../../read-policy/read-policy.js';
import { EXPORT_FORMATS, URL_SCHEMES, type ExportFormat, type UrlScheme } from './export-formats.js';

export class ExportQueryDto extends ReadFiltersQueryDto {
  @ApiProperty({
    enum: EXPORT_FORMATS,
    description:
      '`txt`: one key value per line (a blocklist); `csv`: one row per key with a header; `ndjson`: one object per line, ' +
      'as listed; `stix`: a STIX 2.1 bundle, per object its indicator and observable as TAXII serves them.',
  })
  @IsIn(EXPORT_FORMATS, { message: `format must be one of ${EXPORT_FORMATS.join(', ')}` })
  format: ExportFormat;

  @ApiPropertyOptional({
    enum: KEY_TYPES,
    description: '`txt` and `csv` only: only keys of this type (firewalls take one type per list).',
  })
  @IsOptional()
  @IsIn(KEY_TYPES, { message: `keyType must be one of ${KEY_TYPES.join(', ')}` })
  keyType?: KeyType;

  @ApiPropertyOptional({
    enum: URL_SCHEMES,
    description: '`txt` only: `omit` lists URLs without `http://` or `https://` (PAN-OS URL lists); default `keep`.',
  })
  @IsOptional()
  @IsIn(URL_SCHEMES, { message: `urlScheme must be one of ${URL_SCHEMES.join(', ')}` })
  urlScheme?: UrlScheme;

  @ApiPropertyOptional({
    enum: WARNINGLIST_MODES,
    description:
      'Default `apply`: objects with a key on an enabled warninglist whose action is `excludeFromExport` or `rejectOnIngest` ' +
      'are left out (counted in `X-Excluded-Count`); `ignore` exports them too.',
  })
  @IsOptional()
  @IsIn(WARNINGLIST_MODES, { message: `warninglists must be one of ${WARNINGLIST_MODES.join(', ')}` })
  warninglists?: WarninglistMode;
}

/** The headers of an export, and of its HEAD and 304 answers (the same values as the GET's). */
export const EXPORT_HEADERS = {
  ETag: {
    description: "Strong tag of the exported content: the collection's feed position and the query. Send it back in `If-None-Match`.",
    schema: { type: 'string' },
  },
  'Last-Modified': { description: 'When the exported content last changed (a write or an expiry).', schema: { type: 'string' } },
  'X-Excluded-Count': {
    description:
      'How many stored live objects this export leaves out because a key of theirs is on a warninglist (`0` when none), ' +
      'of those it would hold (its `keyType`, sighting filters and marking ceiling apply: what the key may not see is never counted).',
    schema: { type: 'integer' },
  },
  'X-TLP-Max': {
    description: 'The most restrictive TLP marking among the objects this export holds (`TLP:CLEAR` when it holds none).',
    schema: { type: 'string', enum: [...TLP_LEVELS] },
  },
};
