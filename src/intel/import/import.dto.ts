import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { ObjectFormDto } from '../../common/indicators/object-form.dto.js';
import { BatchReportView } from '../batch/batch.dto.js';
import { WriteMarkingQueryDto } from '../dto/object.dto.js';

export const IMPORT_FORMATS = ['text', 'csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

const COLUMN = { maxLength: 256 };

/** The format and its columns, the context, `dryRun`, `atomic`, and `tlp`: the marking of every object (WriteMarkingQueryDto). */
export class ImportQueryDto extends WriteMarkingQueryDto {
  @ApiProperty({ enum: IMPORT_FORMATS, description: '`text`: indicators found in free text; `csv`: a CSV with a header row.' })
  @IsIn(IMPORT_FORMATS, { message: `format must be one of ${IMPORT_FORMATS.join(', ')}` })
  format: ImportFormat;

  @ApiPropertyOptional({ ...COLUMN, description: '`csv`: the column holding the key type (`MD5Hash`..., or `md5`, `domain`, `url`, `ip-dst`...).' })
  @IsOptional()
  @IsString()
  @MaxLength(COLUMN.maxLength)
  typeColumn?: string;

  @ApiPropertyOptional({ ...COLUMN, description: '`csv`: the column holding the key value.' })
  @IsOptional()
  @IsString()
  @MaxLength(COLUMN.maxLength)
  valueColumn?: string;

  @ApiPropertyOptional({ maxLength: 4096, description: "`csv`: comma-separated columns copied into each object's context." })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  contextColumns?: string;

  @ApiPropertyOptional({ maxLength: 65536, description: 'The context of every object, a JSON object (or the `X-Import-Context` header).' })
  @IsOptional()
  @IsString()
  @MaxLength(65536)
  context?: string;

  @ApiPropertyOptional({ enum: ['true', 'false'], description: '`true`: answer with the objects found and write nothing.' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'dryRun must be true or false' })
  dryRun?: 'true' | 'false';

  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'As for batches: when any object fails, nothing is written (422).' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'atomic must be true or false' })
  atomic?: 'true' | 'false';
}

export class ImportView {
  @ApiProperty({
    type: [ObjectFormDto],
    description: 'The objects found, in the order they were written: `report.items[i]` is about `objects[i]`.',
  })
  objects: Record<string, unknown>[];

  @ApiPropertyOptional({ type: BatchReportView, description: 'The batch report; absent on a dry run.' })
  report?: BatchReportView;
}
