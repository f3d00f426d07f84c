import {
  Body,
  type CallHandler,
  Controller,
  type ExecutionContext,
  HttpCode,
  Injectable,
  type NestInterceptor,
  Post,
  UseInterceptors,
} from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { unsupportedAttributeIn } from '../common/indicators/index.js';
import { CompleteTaskDto, FailTaskDto, TakeTasksDto, TaskQueueItemView } from './dto/task-queue.dto.js';
import { InsightErrors } from './insight.errors.js';
import { TaskQueueService } from './task-queue.service.js';

/**
 * Refuses a result context holding an attribute the global pipe would delete before validation
 * (UNSUPPORTED_ATTRIBUTE_NAMES): 400 InvalidData rather than a result checked and stored without it.
 * An interceptor, because interceptors run before pipes.
 */
@Injectable()
export class ResultAttributesGuard implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const body: unknown = context.switchToHttp().getRequest<Request>().body;
    const result: unknown = typeof body === 'object' && body !== null ? (body as { result?: unknown }).result : undefined;
    if (typeof result === 'object' && result !== null && 'context' in result) {
      const pointer = unsupportedAttributeIn(result.context, '/result/context');
      if (pointer !== undefined) throw InsightErrors.unsupportedAttribute(pointer);
    }
    return next.handle();
  }
}

@ApiTags('insight')
@Controller('insight/task-queue')
export class TaskQueueController {
  constructor(private readonly queue: TaskQueueService) {}

  @Post('executing-tasks')
  @HttpCode(200)
  @RequirePermission('task-queue', 'Write')
  @ApiOkResponse({ type: [TaskQueueItemView], description: 'The leased tasks, oldest first; `[]` when none wait.' })
  @ApiErrors({ 400: 'InvalidData: limit is not an integer from 1 to 1000.' })
  take(@Body() form: TakeTasksDto) {
    return this.queue.take(form);
  }

  @Post('completed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiNoContentResponse()
  @ApiErrors({
    400: 'InvalidData: a malformed report.',
    422: 'TaskNotFound, InvalidState, InvalidKeyFormat, InvalidKeySet, SchemaCheckFail (details: AbsoluteKeywordLocation, InstanceLocation, Message, errors).',
  })
  @UseInterceptors(ResultAttributesGuard)
  complete(@Body() form: CompleteTaskDto) {
    return this.queue.complete(form);
  }

  @Post('failed-tasks')
  @HttpCode(204)
  @RequirePermission('task-queue', 'Write')
  @ApiNoContentResponse()
  @ApiErrors({ 400: 'InvalidData: a malformed report.', 422: 'TaskNotFound, InvalidState.' })
  fail(@Body() form: FailTaskDto) {
    return this.queue.fail(form);
  }
}
