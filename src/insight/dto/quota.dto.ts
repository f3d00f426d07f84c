import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

const LIMIT = { type: 'integer', minimum: 1, maximum: 1_000_000_000 } as const;

/** A positive whole number of hand-outs or leases. */
const Limit = (description: string) => applyDecorators(ApiPropertyOptional({ ...LIMIT, description }), IsOptional(), IsInt(), Min(1), Max(LIMIT.maximum));

export class QuotaDto {
  @Limit('Tasks handed out per UTC minute.')
  perMinute?: number;

  @Limit('Tasks handed out per UTC hour.')
  perHour?: number;

  @Limit('Tasks handed out per UTC day.')
  perDay?: number;

  @Limit('Tasks of the schema leased at once.')
  maxLeased?: number;
}

export class QuotaUseView {
  @ApiProperty({ type: 'integer', description: 'Handed out in the current UTC minute.' })
  minute: number;

  @ApiProperty({ type: 'integer' })
  hour: number;

  @ApiProperty({ type: 'integer' })
  day: number;

  @ApiProperty({ type: 'integer', description: 'Leased now.' })
  leased: number;
}

export class QuotaView extends QuotaDto {
  @ApiProperty()
  schemaID: string;

  @ApiProperty({ type: QuotaUseView })
  used: QuotaUseView;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the next task can be handed out; null: now.' })
  nextUnitAt: string | null;
}
