import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, StreamableFile } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { PageResult } from '../pagination/page.js';
import { formatTag, TaggedResult } from '../tags/tag.js';
import { jsonArrayWithin } from './json-array-body.js';
import { setTag } from './security-headers.js';

/** Thrown to end a conditional GET with 304; the exception filter writes it. */
export class NotModified {}

function linkTo(request: Request, cursor: string): string {
  const url = new URL(request.originalUrl, 'http://placeholder');
  url.searchParams.set('cursor', cursor);
  // Path-absolute, carrying limit and every filter the client sent (the SDK follows the link verbatim).
  return `${url.pathname}${url.search}`;
}

/**
 * Turns the shared result wrappers into HTTP: pages become a bare JSON array, at most PAGE_MAX_BYTES of it,
 * plus `Link` (next and related); tagged bodies get `ETag` and honour `If-None-Match`.
 */
@Injectable()
export class ResultInterceptor implements NestInterceptor {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        if (result instanceof PageResult) return this.page(request, response, result);
        if (result instanceof TaggedResult) {
          const tag = formatTag(result.version);
          setTag(response, tag);
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

  /**
   * The items that fit in the byte cap, streamed. A page cut short links to the position after its last item
   * sent, so a follower walks every item exactly once whatever the sizes (wire-contract §3.2 included: every
   * non-empty page of the feed keeps its next link). An empty page links only when it says it has a next one
   * (the feed's page of records a key may not see).
   */
  private page(request: Request, response: Response, page: PageResult<unknown>): StreamableFile {
    const body = jsonArrayWithin(page.items, this.config.pageMaxBytes);
    const links: string[] = [];
    if (body.count < page.items.length || page.hasNext) {
      links.push(`<${linkTo(request, page.cursorAfter(body.count - 1))}>; rel="next"`);
    }
    if (page.related) links.push(`<${page.related.path}?cursor=${page.related.cursor}>; rel="related"`);
    if (links.length > 0) response.setHeader('Link', links.join(', '));
    return new StreamableFile(body.stream, { type: 'application/json; charset=utf-8', length: body.bytes });
  }
}
