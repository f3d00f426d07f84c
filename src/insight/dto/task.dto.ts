import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsDefined, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import type { ObjectKey } from '../../common/indicators/index.js';
import { PageQueryDto } from '../../common/pagination/page.js';
import { UUID_PATTERN } from '../../common/validation/uuid.js';
import { SCHEMA_ID_PATTERN } from '../../schema-registry/dto/schema.dto.js';
import { TASK_STATES, type TaskState } from '../entities/task.entity.js';
import { InsightObjectKeyDto, InsightObjectView } from './insight-object.dto.js';

/** The states of a task, as its view and the `state` filter name them. */
export { TASK_STATES, type TaskState };

export class TaskParamsDto {
  @ApiProperty({
    description: 'The insight schema the result is validated against.',
    example: 'phishing',
    pattern: SCHEMA_ID_PATTERN.source,
  })
  @IsString()
  @Matches(SCHEMA_ID_PATTERN, { message: 'schemaID must be a schema identifier' })
  schemaID: string;

  @ApiPropertyOptional({
    type: [InsightObjectKeyDto],
    description:
      'Keys of one object, by the key-set rules of objects (hash keys: a File, one key per hash type; otherwise exactly one key); the object type is inferred.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @ValidateNested({ each: true })
  @Type(() => InsightObjectKeyDto)
  objectKeys?: InsightObjectKeyDto[];

  @ApiPropertyOptional({ format: 'uuid', description: 'A filebox file.' })
  @IsOptional()
  @Matches(UUID_PATTERN, { message: 'fileID must be a UUID' })
  fileID?: string;
}

export const DEDUPE_MODES = ['none', 'inflight', 'result'] as const;
export type DedupeMode = (typeof DEDUPE_MODES)[number];
export const DEFAULT_RESULT_MAX_AGE_SECONDS = 86400;

export class RegisterTaskDto {
  @ApiProperty({ type: TaskParamsDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => TaskParamsDto)
  params: TaskParamsDto;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 5, default: 3, description: '1 is served first; oldest first within a priority.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(5)
  priority?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 20, description: 'Default TASK_MAX_DELIVERIES.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(20)
  maxAttempts?: number;

  @ApiPropertyOptional({
    enum: DEDUPE_MODES,
    default: 'none',
    description:
      '`inflight`: an identical task not yet finished is answered (200, `deduplicated: true`) instead of a new one; ' +
      '`result`: also a completed one younger than `maxAgeSeconds`. Identical: the same schema, normalised keys and ' +
      'file content (SHA-256).',
  })
  @IsOptional()
  @IsIn(DEDUPE_MODES)
  dedupe?: DedupeMode;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 31536000, default: DEFAULT_RESULT_MAX_AGE_SECONDS, description: 'Only with `dedupe: result`.' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(31536000)
  maxAgeSeconds?: number;
}

export class ListTasksQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: TASK_STATES, description: 'Only tasks in this state (as their view shows it).' })
  @IsOptional()
  @IsIn(TASK_STATES)
  state?: TaskState;

  @ApiPropertyOptional({ description: 'Only tasks whose error has this code (e.g. AttemptsExhausted, DeliveryLimitExceeded, Cancelled).', maxLength: 256 })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  @Matches(/^[^\u0000]*$/, { message: 'errorCode must not contain U+0000' })
  errorCode?: string;

  @ApiPropertyOptional({ description: 'Only tasks of this result schema.', pattern: SCHEMA_ID_PATTERN.source })
  @IsOptional()
  @Matches(SCHEMA_ID_PATTERN, { message: 'schemaID must be a schema identifier' })
  schemaID?: string;
}

/** Any string is accepted: a malformed id cannot name a task, so it answers 404 like an unknown one. */
export class TaskIdParamDto {
  @ApiProperty({ format: 'uuid' })
  @IsString()
  task_id: string;
}

export class TaskRegistrationView {
  @ApiProperty({ format: 'uuid' })
  taskID: string;

  @ApiPropertyOptional({ description: 'Present (true) when an identical task was answered instead of a new one (status 200).' })
  deduplicated?: boolean;
}

export class TaskParamsView {
  @ApiProperty()
  schemaID: string;

  @ApiPropertyOptional({ type: [InsightObjectKeyDto], description: 'Normalised.' })
  objectKeys?: ObjectKey[];

  @ApiPropertyOptional({ format: 'uuid' })
  fileID?: string;
}

export class TaskErrorView {
  @ApiProperty({ example: 'DeliveryLimitExceeded' })
  code: string;

  @ApiProperty()
  message: string;
}

export class TaskFailureView extends TaskErrorView {
  @ApiPropertyOptional({
    type: TaskErrorView,
    description: 'With `AttemptsExhausted`: the error the executor reported on the last attempt, as it sent it.',
  })
  lastError?: TaskErrorView;
}

export class TaskView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: TaskParamsView })
  params: TaskParamsView;

  @ApiProperty({ enum: TASK_STATES })
  state: TaskState;

  @ApiPropertyOptional({ type: InsightObjectView, description: 'Present when Completed; normalised.' })
  result?: InsightObjectView;

  @ApiPropertyOptional({ type: TaskFailureView, description: 'Present when Failed.' })
  error?: TaskFailureView;
}

export const ATTEMPT_OUTCOMES = ['completed', 'permanent', 'transient', 'rateLimited', 'leaseExpired', 'cancelled'] as const;

export class TaskAttemptView {
  @ApiProperty({ type: 'integer', minimum: 1 })
  attempt: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'The name the executor gave at take; null when it gave none.' })
  executor: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The key that took the task.' })
  keyID: number | null;

  @ApiProperty({ format: 'date-time' })
  takenAt: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'Null while the attempt runs.' })
  endedAt: string | null;

  @ApiProperty({
    type: 'string',
    enum: ATTEMPT_OUTCOMES,
    nullable: true,
    description: 'How the attempt ended (a failure by its kind); null while it runs.',
  })
  outcome: (typeof ATTEMPT_OUTCOMES)[number] | null;

  @ApiProperty({ type: TaskErrorView, nullable: true, description: 'The error the executor reported, if any.' })
  error: TaskErrorView | null;
}

export class TaskProgressView {
  @ApiProperty({ type: 'number', minimum: 0, maximum: 100 })
  percent: number;

  @ApiPropertyOptional()
  message?: string;
}

/** The view of one task: the product's view plus what executors' protocol adds (extensions §16). */
export class TaskDetailView extends TaskView {
  @ApiPropertyOptional({ description: 'Present (true) once the task was cancelled while leased, until it ends.' })
  cancelRequested?: boolean;

  @ApiPropertyOptional({ type: TaskProgressView, description: "The current attempt's last reported progress." })
  progress?: TaskProgressView;

  @ApiPropertyOptional({ type: [TaskAttemptView], description: 'With `attempts=true`: every attempt, oldest first.' })
  attempts?: TaskAttemptView[];
}
