import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page.js';
import { ResourceRefView } from './api-key.dto.js';

export class ListResourcesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', description: 'Absent: top-level resources; given: its direct children.' })
  @IsOptional()
  @Matches(/^[1-9]\d{0,9}$/, { message: 'parentID must be a positive integer' })
  parentID?: string;
}

export class ResourceView {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty()
  name: string;

  @ApiPropertyOptional({ type: ResourceRefView, nullable: true })
  parent?: ResourceRefView;
}
