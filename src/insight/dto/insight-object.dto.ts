import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, ValidateNested } from 'class-validator';
import {
  INSIGHT_KEY_TYPES,
  INSIGHT_OBJECT_TYPES,
  ObjectFormDto,
  ObjectKeyDto,
  type InsightKeyType,
  type InsightObjectType,
  type ObjectKey,
} from '../../common/indicators/index.js';

// The shared indicator DTOs narrowed to insight's enums: the inherited IsIn checks stay, the added ones
// refuse IPNetwork (400 InvalidData: it is not an insight enum value, wire-contract §6).

export class InsightObjectKeyDto extends ObjectKeyDto {
  @ApiProperty({ enum: INSIGHT_KEY_TYPES })
  @IsIn(INSIGHT_KEY_TYPES)
  declare type: InsightKeyType;
}

export class InsightObjectFormDto extends ObjectFormDto {
  @ApiProperty({ enum: INSIGHT_OBJECT_TYPES })
  @IsIn(INSIGHT_OBJECT_TYPES)
  declare type: InsightObjectType;

  @ApiProperty({ type: [InsightObjectKeyDto] })
  @IsArray()
  @ArrayMaxSize(64)
  @ValidateNested({ each: true })
  @Type(() => InsightObjectKeyDto)
  declare keys: InsightObjectKeyDto[];
}

/** An insight object as the service shows it (normalised keys). */
export class InsightObjectView {
  @ApiProperty({ enum: INSIGHT_OBJECT_TYPES })
  type: InsightObjectType;

  @ApiProperty({ type: [InsightObjectKeyDto] })
  keys: ObjectKey[];

  @ApiProperty({ type: 'object', additionalProperties: true })
  context: Record<string, unknown>;
}
