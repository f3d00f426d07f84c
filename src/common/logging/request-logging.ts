import type { Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessRequest } from '../guard/access.js';
import { routeTemplate } from '../http/route-template.js';
import type { RootLogger } from './logger.js';
import { requestIdFor } from './request-id.js';

/** The fields of a request line; headers, query strings and bodies are never logged (they carry keys and tokens). */
function requestFields(req: IncomingMessage, res: ServerResponse, durationMs: number) {
  const request = req as AccessRequest;
  return {
    method: request.method,
    route: routeTemplate(request),
    path: request.path,
    status: res.writableFinished ? res.statusCode : 'aborted',
    durationMs,
    keyId: request.principal?.keyId,
  };
}

declare module 'http' {
  interface IncomingMessage {
    /** The request's logger: lines written through it carry its request id (set by requestLogging). */
    log?: RootLogger;
  }
}

/**
 * One line per request when its response ends (info; error for 5xx or a failed response), with the request id
 * taken from `X-Request-Id` (or generated) and echoed in the response at once, so that error answers carry it
 * too. `request.log` is a child logger bound to that id, for error lines about the request.
 *
 * Written here rather than with pino-http (which it replaced, line for line the same output): pino-http made
 * two child loggers and kept per-request bookkeeping for every request, about a tenth of the service's CPU on
 * a cheap request (BENCHMARKS.md, row 2). The line goes through the root logger with the id as its first
 * field, which pino writes exactly as a child's binding; the child is made only when something asks for it.
 */
export function requestLogging(logger: RootLogger): RequestHandler {
  return (request, response, next) => {
    const started = Date.now();
    const requestId = requestIdFor(request.headers['x-request-id']);
    response.setHeader('X-Request-Id', requestId);
    let child: RootLogger | undefined;
    Object.defineProperty(request, 'log', {
      configurable: true,
      enumerable: true,
      get: () => (child ??= logger.child({ requestId })),
    });
    const ended = (error?: Error) => {
      response.removeListener('close', ended);
      response.removeListener('finish', ended);
      response.removeListener('error', ended);
      const fields = { requestId, ...requestFields(request, response, Date.now() - started) };
      const message = `${request.method} ${routeTemplate(request)} ${response.statusCode}`;
      if (error || response.statusCode >= 500) logger.error(fields, message);
      else logger.info(fields, message);
    };
    response.on('close', ended);
    response.on('finish', ended);
    response.on('error', ended);
    next();
  };
}
