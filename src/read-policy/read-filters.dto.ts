import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { SightingFilterQueryDto } from '../sightings/sighting-filter.js';

/**
 * The query members of the read policy's rules, mixed into the query DTOs of the reads that take them
 * (listings, exports): the sighting filters and `maxTLP`, which narrows the key's ceiling (never widens it).
 */
export class ReadFiltersQueryDto extends SightingFilterQueryDto {
  @ApiPropertyOptional({ description: "Leave out objects marked above this TLP level (narrows the key's maxTLP; never widens it)." })
  @IsOptional()
  @IsString()
  maxTLP?: string;
}
