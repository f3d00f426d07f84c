import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { PageQueryDto } from '../../common/pagination/page.js';
import {
  ArrayMaxSize,
  IsIn,
  IsArray,
  IsDefined,
  IsOptional,
  IsString,
  Matches,
  ValidateNested,
} from 'class-validator';
import type { ObjectKey } from '../../common/indicators/index.js';
import { SCHEMA_ID_PATTERN } from '../../schema-registry/dto/schema.dto.js';
import { TASK_STATES, type TaskState } from '../entities/task.entity.js';
import { InsightObjectKeyDto, InsightObjectView } from './insight-object.dto.js';

/** The states of a task, as its view and the `state` filter name them. */
export { TASK_STATES, type TaskState };

/** Canonical hyphenated UUID, any case (the SDK sends lower case; stored and shown in lower case). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
    description: 'Keys of one object, by the key-set rules of objects (hash keys: a File, one key per hash type; otherwise exactly one key); the object type is inferred.',
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

export class RegisterTaskDto {
  @ApiProperty({ type: TaskParamsDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => TaskParamsDto)
  params: TaskParamsDto;
}

export class ListTasksQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: TASK_STATES, description: 'Only tasks in this state (as their view shows it).' })
  @IsOptional()
  @IsIn(TASK_STATES)
  state?: TaskState;
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

export class TaskView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: TaskParamsView })
  params: TaskParamsView;

  @ApiProperty({ enum: TASK_STATES })
  state: TaskState;

  @ApiPropertyOptional({ type: InsightObjectView, description: 'Present when Completed; normalised.' })
  result?: InsightObjectView;

  @ApiPropertyOptional({ type: TaskErrorView, description: 'Present when Failed.' })
  error?: TaskErrorView;
}
