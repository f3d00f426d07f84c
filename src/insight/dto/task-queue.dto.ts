import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { WaitBody } from '../../common/http/long-poll.js';
import { UUID_PATTERN } from '../../common/validation/uuid.js';
import { SCHEMA_ID_PATTERN } from '../../schema-registry/dto/schema.dto.js';
import { InsightObjectFormDto } from './insight-object.dto.js';
import { TaskParamsView } from './task.dto.js';

export const MAX_TAKE = 1000;

/** A lease token as take hands it out: 32 random bytes in lower-case hex. */
export const LEASE_TOKEN_PATTERN = /^[0-9a-f]{64}$/;

/** PostgreSQL text cannot hold U+0000: refused here (400) rather than failing the insert (500). */
const NO_NUL = /^[^\u0000]*$/;

const LEASE_TOKEN_DESCRIPTION =
  "The attempt's `leaseToken` from the take. With it, a report of an attempt that is no longer current is 409 " +
  '`LeaseLost`; without it, a report is refused only while another key holds a live lease of the task.';

export class TakeTasksDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_TAKE, description: 'Most tasks to take.' })
  @IsInt()
  @Min(1)
  @Max(MAX_TAKE)
  limit: number;

  @WaitBody()
  wait?: number;

  @ApiPropertyOptional({
    type: [String],
    minItems: 1,
    maxItems: 100,
    description: 'Only tasks of these result schemas (an unknown id matches nothing).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(SCHEMA_ID_PATTERN, { each: true, message: 'each of schemas must be a schema identifier' })
  schemas?: string[];

  @ApiPropertyOptional({ maxLength: 128, description: "The executor's own name, recorded with each attempt it takes." })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  @Matches(NO_NUL, { message: 'executor must not contain U+0000' })
  executor?: string;
}

/** What every report carries: the task it is about, and the attempt's lease token when the executor has one. */
class TaskReportDto {
  @ApiProperty({ format: 'uuid' })
  @Matches(UUID_PATTERN, { message: 'taskID must be a UUID' })
  taskID: string;

  @ApiPropertyOptional({ pattern: LEASE_TOKEN_PATTERN.source, description: LEASE_TOKEN_DESCRIPTION })
  @IsOptional()
  @Matches(LEASE_TOKEN_PATTERN, { message: 'leaseToken must be the token the take handed out' })
  leaseToken?: string;
}

export class CompleteTaskDto extends TaskReportDto {
  @ApiProperty({ type: InsightObjectFormDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => InsightObjectFormDto)
  result: InsightObjectFormDto;
}

export const FAILURE_KINDS = ['permanent', 'transient', 'rateLimited'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export class TaskErrorDto {
  @ApiProperty({ maxLength: 256, description: "The executor's own code (no U+0000)." })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  @Matches(NO_NUL, { message: 'code must not contain U+0000' })
  code: string;

  @ApiProperty({ maxLength: 65536, description: 'No U+0000.' })
  @IsString()
  @MaxLength(65536)
  @Matches(NO_NUL, { message: 'message must not contain U+0000' })
  message: string;

  @ApiPropertyOptional({
    enum: FAILURE_KINDS,
    description:
      '`permanent` (default): the task fails. `transient`: it is taken again after a capped, jittered back-off, ' +
      'until its attempts are used (then `AttemptsExhausted`). `rateLimited`: it and every task of its schema wait ' +
      '`retryAfterSeconds`, no attempt used.',
  })
  @IsOptional()
  @IsIn(FAILURE_KINDS)
  kind?: FailureKind;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 86400, description: 'Required with `rateLimited`, only there.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86400)
  retryAfterSeconds?: number;
}

export class FailTaskDto extends TaskReportDto {
  @ApiProperty({ type: TaskErrorDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => TaskErrorDto)
  error: TaskErrorDto;
}

export class TaskProgressDto {
  @ApiProperty({ type: 'number', minimum: 0, maximum: 100 })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(100)
  percent: number;

  @ApiPropertyOptional({ maxLength: 1024, description: 'No U+0000.' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  @Matches(NO_NUL, { message: 'message must not contain U+0000' })
  message?: string;
}

export const MAX_EXTEND_SECONDS = 3600;

export class HeartbeatDto {
  @ApiProperty({ format: 'uuid' })
  @Matches(UUID_PATTERN, { message: 'taskID must be a UUID' })
  taskID: string;

  @ApiProperty({ pattern: LEASE_TOKEN_PATTERN.source, description: "The attempt's `leaseToken` from the take." })
  @Matches(LEASE_TOKEN_PATTERN, { message: 'leaseToken must be the token the take handed out' })
  leaseToken: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_EXTEND_SECONDS, description: 'Default TASK_LEASE_SECONDS.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_EXTEND_SECONDS)
  extendSeconds?: number;

  @ApiPropertyOptional({ type: TaskProgressDto, description: 'Shown in the task view as `progress`.' })
  @IsOptional()
  @ValidateNested()
  @Type(() => TaskProgressDto)
  progress?: TaskProgressDto;
}

export class HeartbeatView {
  @ApiProperty({ format: 'date-time', description: 'The lease now ends here (capped at the take + TASK_MAX_LEASE_SECONDS).' })
  leaseExpiresAt: Date;

  @ApiProperty({ description: 'The task was cancelled: stop and report (any failure kind ends it as `Cancelled`).' })
  cancelRequested: boolean;
}

export class TaskQueueItemView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: Date;

  @ApiProperty({ type: TaskParamsView })
  params: TaskParamsView;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Fleet takes only (`executor` or `schemas` given): 1 + the attempts used so far.' })
  attempt?: number;

  @ApiPropertyOptional({ pattern: LEASE_TOKEN_PATTERN.source, description: 'Fleet takes only: the token of this attempt, for its reports and heartbeats.' })
  leaseToken?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Fleet takes only: when the lease ends unless a heartbeat extends it.' })
  leaseExpiresAt?: Date;
}
