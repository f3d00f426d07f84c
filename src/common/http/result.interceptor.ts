import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { PageResult } from '../pagination/page.js';
import { formatTag, TaggedResult } from '../tags/tag.js';

/** Thrown to end a conditional GET with 304; the exception filter writes it. */
export class NotModified {}

function linkTo(request: Request, cursor: string): string {
  const url = new URL(request.originalUrl, 'http://placeholder');
  url.searchParams.set('cursor', cursor);
  // Path-absolute, carrying limit and every filter the client sent (the SDK follows the link verbatim).
  return `${url.pathname}${url.search}`;
}

/**
 * Turns the shared result wrappers into HTTP: pages become a bare JSON array plus `Link` (next and
 * related), tagged bodies get `ETag` and honour `If-None-Match`.
 */
@Injectable()
export class ResultInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        if (result instanceof PageResult) {
          const links: string[] = [];
          if (result.nextCursor !== undefined) links.push(`<${linkTo(request, result.nextCursor)}>; rel="next"`);
          if (result.related) {
            links.push(`<${result.related.path}?cursor=${result.related.cursor}>; rel="related"`);
          }
          if (links.length > 0) response.setHeader('Link', links.join(', '));
          return result.items;
        }
        if (result instanceof TaggedResult) {
          const tag = formatTag(result.version);
          response.setHeader('ETag', tag);
          const ifNoneMatch = request.headers['if-none-match'];
          if (typeof ifNoneMatch === 'string' && ifNoneMatch.split(',').some((entry) => entry.trim() === tag)) {
            throw new NotModified();
          }
          return result.body;
        }
        return result;
      }),
    );
  }
}
