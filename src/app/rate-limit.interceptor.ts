import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { from, Observable, switchMap } from 'rxjs';
import { AuthErrors } from '../auth/auth.errors.js';
import { RequestLimitsService } from '../auth/request-limits.service.js';
import { AccessRequest, childrenActionOf } from '../common/guard/access.js';

/**
 * The one global rate-limit interceptor (decisions §4). It runs after the guard and counts the request
 * against every limit of the key that targets the route's `(resource, action)` or `(direct parent,
 * *Children)`. Refused requests are not executed.
 */
@Injectable()
export class RateLimitInterceptor implements NestInterceptor {
  constructor(private readonly limits: RequestLimitsService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AccessRequest>();
    const { principal, requiredAccess } = request;
    if (!principal || !requiredAccess || principal.limits.length === 0) return next.handle();
    const { resource, action } = requiredAccess;
    const matching = principal.limits.filter(
      (grant) =>
        (grant.resourceId === resource.id && grant.action === action) ||
        (resource.parentId !== null && grant.resourceId === resource.parentId && grant.action === childrenActionOf(action)),
    );
    if (matching.length === 0) return next.handle();

    return from(this.limits.consume(matching)).pipe(
      switchMap((decision) => {
        const response = context.switchToHttp().getResponse<Response>();
        response.setHeader('RateLimit-Limit', String(decision.limit));
        response.setHeader('RateLimit-Remaining', String(decision.remaining));
        response.setHeader('RateLimit-Reset', String(decision.resetSeconds));
        if (!decision.allowed) throw AuthErrors.limitExceeded(decision.resetSeconds);
        return next.handle();
      }),
    );
  }
}
