import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page.js';

/** Exactly one of `within` and `contains`, plus the page. */
export class NetworkQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description: 'An IP address or CIDR network (IPv4 or IPv6): objects whose IPAddress or IPNetwork key lies inside it, itself included.',
    example: '10.0.0.0/8',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  within?: string;

  @ApiPropertyOptional({
    description: 'An IP address or CIDR network (IPv4 or IPv6): objects whose IPNetwork key contains it, itself included.',
    example: '10.1.2.3',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  contains?: string;
}
