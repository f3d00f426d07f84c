import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { from, map, mergeMap, Observable, of } from 'rxjs';
import type { AccessRequest } from '../common/guard/access.js';
import { AuditTrail } from './audit-trail.js';

/**
 * The outermost global interceptor: once a handler has its answer, the request's audit entry is stored
 * before the answer is released (refusals and errors are recorded by the exception filter instead). The
 * status is the response's: Nest sets it (201, `@HttpCode`) before the interceptors run.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(private readonly audit: AuditTrail) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.audit.enabled) return next.handle();
    const request = context.switchToHttp().getRequest<AccessRequest>();
    const response = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      mergeMap((result: unknown) => {
        const stored = this.audit.afterOutcome(request, response.statusCode, result);
        return stored ? from(stored).pipe(map(() => result)) : of(result);
      }),
    );
  }
}
