import type { Request, RequestHandler } from 'express';
import type { AccessRequest } from '../guard/access.js';
import { plainAddress } from '../http/client-address.js';
import { routeTemplate } from '../http/route-template.js';
import type { RootLogger } from './logger.js';
import { requestIdFor } from './request-id.js';

const REQUEST_LOG = Symbol('requestLog');

interface RequestLogState {
  id: string;
  root: RootLogger;
  logger?: RootLogger;
}

interface LoggedRequest extends Request {
  [REQUEST_LOG]?: RequestLogState;
}

/**
 * The logger for lines about one request (errors), bound to its request id; undefined for a request that
 * did not pass through `requestLogging`. Made on first use: most requests never need one.
 */
export function requestLog(request: Request): RootLogger | undefined {
  const state = (request as LoggedRequest)[REQUEST_LOG];
  if (!state) return undefined;
  return (state.logger ??= state.root.child({ requestId: state.id }));
}

/** The request id `requestLogging` gave the request (echoed in `X-Request-Id`); undefined without it. */
export function requestIdOf(request: Request): string | undefined {
  return (request as LoggedRequest)[REQUEST_LOG]?.id;
}

/**
 * One line per request when its response ends (info; error for 5xx), with the request id taken from
 * `X-Request-Id` (or generated) and echoed in the response at once, so that error answers carry it too.
 * Headers, query strings and bodies are never logged (they carry keys and tokens). The line is written with
 * the root logger directly: a request costs one header, one listener and, at `info`, one JSON line.
 */
export function requestLogging(logger: RootLogger): RequestHandler {
  return (request, response, next) => {
    const started = performance.now();
    const id = requestIdFor(request.headers['x-request-id']);
    response.setHeader('X-Request-Id', id);
    (request as LoggedRequest)[REQUEST_LOG] = { id, root: logger };
    response.once('close', () => {
      const finished = response.writableFinished;
      const level = response.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const route = routeTemplate(request);
      logger[level](
        {
          requestId: id,
          method: request.method,
          route,
          path: request.path,
          status: finished ? response.statusCode : 'aborted',
          durationMs: Math.round(performance.now() - started),
          keyId: (request as AccessRequest).principal?.keyId,
          address: plainAddress(request.ip),
        },
        `${request.method} ${route} ${response.statusCode}`,
      );
    });
    next();
  };
}
