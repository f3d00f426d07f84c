import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsInt, IsNotEmpty, IsString, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { WaitBody } from '../../common/http/long-poll.js';
import { InsightObjectFormDto } from './insight-object.dto.js';
import { TaskParamsView, UUID_PATTERN } from './task.dto.js';

export const MAX_TAKE = 1000;

export class TakeTasksDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_TAKE, description: 'Most tasks to take.' })
  @IsInt()
  @Min(1)
  @Max(MAX_TAKE)
  limit: number;

  @WaitBody()
  wait?: number;
}

/** What both reports carry: the task they are about. */
class TaskReportDto {
  @ApiProperty({ format: 'uuid' })
  @Matches(UUID_PATTERN, { message: 'taskID must be a UUID' })
  taskID: string;
}

export class CompleteTaskDto extends TaskReportDto {
  @ApiProperty({ type: InsightObjectFormDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => InsightObjectFormDto)
  result: InsightObjectFormDto;
}

/** PostgreSQL text cannot hold U+0000: refused here (400) rather than failing the insert (500). */
const NO_NUL = /^[^\u0000]*$/;

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
}

export class FailTaskDto extends TaskReportDto {
  @ApiProperty({ type: TaskErrorDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => TaskErrorDto)
  error: TaskErrorDto;
}

export class TaskQueueItemView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: Date;

  @ApiProperty({ type: TaskParamsView })
  params: TaskParamsView;
}
