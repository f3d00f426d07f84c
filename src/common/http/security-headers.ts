import type { RequestHandler, Response } from 'express';

/**
 * The response headers OWASP's REST guidance asks of every API answer: no content sniffing, no framing, no
 * caching. Set before anything else runs, so refusals get them too; an answer that carries a tag relaxes
 * caching itself (`setTag`). The web console (`/console`) sets its own, stricter set.
 */
export function securityHeaders(): RequestHandler {
  return (request, response, next) => {
    if (request.path !== '/console' && !request.path.startsWith('/console/')) {
      response.setHeader('X-Content-Type-Options', 'nosniff');
      response.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
      response.setHeader('Cache-Control', 'no-store');
    }
    next();
  };
}

/**
 * `ETag` of an authenticated answer: a cache may keep it for this client only and must revalidate it
 * (`If-None-Match`) before every use.
 */
export function setTag(response: Response, tag: string): void {
  response.setHeader('ETag', tag);
  response.setHeader('Cache-Control', 'private, no-cache');
}
