import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, ValidateNested } from 'class-validator';
import { ObjectKeyDto } from '../../common/indicators/object-form.dto.js';
import { WriteMarkingQueryDto } from '../dto/object.dto.js';
import { MAX_BATCH_ITEMS } from './batch-body.js';
import { ITEM_STATUSES, type ItemStatus } from './batch-plan.js';

/** `{"remove": {type, value}}`: a batch item with exactly the rules of `DELETE .../objects`. */
export class RemoveItemDto {
  @ApiProperty({ type: ObjectKeyDto, description: 'A key of the object to remove; normalised like a submitted key.' })
  @IsObject({ message: 'remove must be an object {type, value}' })
  @ValidateNested()
  @Type(() => ObjectKeyDto)
  remove: ObjectKeyDto;
}

/** `atomic`, and `tlp`: the marking of every item (WriteMarkingQueryDto). */
export class BatchQueryDto extends WriteMarkingQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'All or nothing: when any item fails, nothing is applied and the answer is 422 with the report.',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'atomic must be true or false' })
  atomic?: 'true' | 'false';
}

/** The error body of the single endpoint, `{code, message, details?}`, as one item's failure. */
export class ItemErrorView {
  @ApiProperty() code: string;
  @ApiProperty() message: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) details?: Record<string, unknown>;
}

export class BatchItemView {
  @ApiProperty({ description: 'Position of the item in the batch, from 0.' })
  index: number;

  @ApiProperty({
    enum: ITEM_STATUSES,
    description:
      'Added, Updated, Unchanged (an add that changed nothing), Removed, Absent (a remove of a key no object has), ' +
      'Failed (see `error`; the item changed nothing), NotApplied (only in the 422 answer of an atomic batch: the item ' +
      'was valid, but another one failed, so nothing was applied).',
  })
  status: ItemStatus;

  @ApiPropertyOptional({ type: ItemErrorView, description: 'Why the item failed: the error the single endpoint would give.' })
  error?: ItemErrorView;
}

export class BatchReportView {
  @ApiProperty() added: number;
  @ApiProperty() updated: number;
  @ApiProperty() unchanged: number;
  @ApiProperty() removed: number;
  @ApiProperty({ description: 'Items that failed (Absent removes are not failures).' }) failed: number;

  @ApiProperty({ type: [BatchItemView], description: 'One entry per item, in the order of the batch.' })
  items: BatchItemView[];
}

/** The OpenAPI request body; as NDJSON (`NDJSON_TYPES`) the same items come one per line. */
export const BATCH_BODY_OPENAPI = {
  description:
    `Up to ${MAX_BATCH_ITEMS} items and 32 MiB. An item is an object form \`{type, keys, context}\` (an add, exactly ` +
    'as `POST .../objects`) or `{"remove": {"type": <key type>, "value": <key>}}` (exactly as `DELETE .../objects`). ' +
    'As `application/x-ndjson` (also `application/ndjson`, `application/jsonl`): the same items, one JSON value per ' +
    'line; blank lines are skipped.',
  required: true,
  schema: {
    type: 'array',
    minItems: 1,
    maxItems: MAX_BATCH_ITEMS,
    items: { oneOf: [{ $ref: '#/components/schemas/ObjectFormDto' }, { $ref: '#/components/schemas/RemoveItemDto' }] },
  },
};
