import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { TIMESTAMP_PATTERN } from '../../auth/dto/api-key.dto.js';
import { PageQueryDto } from '../../common/pagination/page.js';

export class ListAuditQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', description: 'Only entries of requests made with this key (or its tokens).' })
  @IsOptional()
  @Matches(/^[1-9]\d{0,9}$/, { message: 'keyID must be a positive integer' })
  keyID?: string;

  @ApiPropertyOptional({
    description: 'Only entries of this operation: the method and the route template, e.g. `POST /auth/keys`.',
    example: 'DELETE /intel/collections/:collection_id/objects',
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  @Matches(/^[A-Z]+ \/\S*$/, { message: 'action must be a method and a route template, e.g. "POST /auth/keys"' })
  action?: string;

  @ApiPropertyOptional({
    description: 'Only entries on this target or anything under it: `intel/c1` also matches `intel/c1/ipv4-addr:10.0.0.1`.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  target?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only entries at or after this moment (RFC 3339).' })
  @IsOptional()
  @IsString()
  @Matches(TIMESTAMP_PATTERN, { message: 'since must be an RFC 3339 timestamp with a time zone' })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only entries before this moment (RFC 3339).' })
  @IsOptional()
  @IsString()
  @Matches(TIMESTAMP_PATTERN, { message: 'until must be an RFC 3339 timestamp with a time zone' })
  until?: string;
}

export class AuditEntryView {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ format: 'date-time', description: 'When the outcome was known (millisecond precision).' })
  at: Date;

  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'The key (or the key of the token) used; null when none was accepted.' })
  keyID: number | null;

  @ApiProperty({ description: 'The request id, as in `X-Request-Id` of the answer and in the request log line.' })
  requestID: string;

  @ApiProperty({ example: 'POST' })
  method: string;

  @ApiProperty({ description: 'The route template, never the raw path.', example: '/auth/keys/:api_key_id/revoked' })
  route: string;

  @ApiProperty({ description: '`<method> <route>`: what the `action` filter matches.', example: 'POST /auth/keys/:api_key_id/revoked' })
  action: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'The resource (`auth`, `filebox`, `intel/<collection>`...) then, where the route names one, the object, task, file, session, schema or key.',
    example: 'auth/17',
  })
  target: string | null;

  @ApiProperty({ type: 'integer', description: 'The status of the answer.' })
  status: number;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'The client address (see TRUST_PROXY).' })
  address: string | null;
}
