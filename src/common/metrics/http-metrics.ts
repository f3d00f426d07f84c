import type { Request, RequestHandler } from 'express';
import { routeTemplate } from '../http/route-template.js';
import type { Metrics } from './metrics.js';

/** Times every request from its arrival to the end of its response (or the client leaving). */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (request, response, next) => {
    const started = process.hrtime.bigint();
    metrics.httpRequestsInFlight.inc();
    response.once('close', () => {
      metrics.httpRequestsInFlight.dec();
      const status = response.writableFinished ? String(response.statusCode) : 'aborted';
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequestDuration.labels(request.method, routeTemplate(request as Request), status).observe(seconds);
    });
    next();
  };
}
