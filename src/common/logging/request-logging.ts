import type { Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { AccessRequest } from '../guard/access.js';
import { routeTemplate } from '../http/route-template.js';
import type { RootLogger } from './logger.js';
import { requestIdFor } from './request-id.js';

/** The fields of a request line; headers, query strings and bodies are never logged (they carry keys and tokens). */
function requestFields(req: IncomingMessage, res: ServerResponse, durationMs: number) {
  const request = req as AccessRequest;
  // The request id is bound to the line's logger (pino-http's child), not repeated here.
  return {
    method: request.method,
    route: routeTemplate(request),
    path: request.path,
    status: res.writableFinished ? res.statusCode : 'aborted',
    durationMs,
    keyId: request.principal?.keyId,
  };
}

/**
 * One line per request when its response ends (info; error for 5xx), with the request id taken from
 * `X-Request-Id` (or generated) and echoed in the response at once, so that error answers carry it too.
 * `request.log` is a child logger bound to that id, for error lines about the request.
 */
export function requestLogging(logger: RootLogger): RequestHandler {
  const middleware = pinoHttp({
    logger,
    genReqId: (req, res) => {
      const id = requestIdFor(req.headers['x-request-id']);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customAttributeKeys: { reqId: 'requestId' },
    quietReqLogger: true,
    quietResLogger: true,
    // Bound at each request's start by pino-http; nothing of the raw request goes into a line.
    serializers: { req: () => undefined },
    wrapSerializers: false,
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessObject: (req, res, value: { responseTime: number }) => requestFields(req, res, value.responseTime),
    customErrorObject: (req, res, _error, value: { responseTime: number }) => requestFields(req, res, value.responseTime),
    customSuccessMessage: (req, res) => `${req.method} ${routeTemplate(req as Request)} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${routeTemplate(req as Request)} ${res.statusCode}`,
  });
  return middleware as unknown as (request: Request, response: Response, next: () => void) => void;
}
