import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditTrail } from '../../audit/audit-trail.js';
import { isDatabaseUnavailable } from '../../database/connection-failure.js';
import { NotModified } from '../http/result.interceptor.js';
import { routeTemplate } from '../http/route-template.js';
import { requestLog } from '../logging/request-logging.js';
import { ApiError, CommonErrors, ErrorCode } from './api-error.js';

/** During an outage every request fails alike: one log line per this interval says so. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  416: 'RangeNotSatisfiable',
  503: 'ServiceUnavailable',
};

/** Framework and body-parser errors carry an HTTP status; keep the 4xx ones, hide everything else. */
export function fromForeign(exception: unknown): ApiError | undefined {
  // A body that is not JSON (or a JSON scalar where an object is due) is invalid data, like a wrong type.
  // The platform wraps body-parser's error in a BadRequestException whose message echoes the input.
  const cause = exception instanceof Error ? (exception.cause as { type?: unknown } | undefined) : undefined;
  if (cause?.type === 'entity.parse.failed' || (exception as { type?: unknown } | null)?.type === 'entity.parse.failed') {
    return new ApiError('InvalidData', 'the request body is not a valid JSON object or array');
  }
  let status: number | undefined;
  let message: string | undefined;
  if (exception instanceof HttpException) {
    status = exception.getStatus();
    message = exception.message;
  } else if (typeof exception === 'object' && exception !== null) {
    const candidate = exception as { status?: unknown; statusCode?: unknown; type?: unknown; message?: unknown };
    const raw = candidate.status ?? candidate.statusCode;
    // body-parser and busboy errors: status plus a machine `type`; nothing else is trusted to be client-facing.
    if (typeof raw === 'number' && typeof candidate.type === 'string') {
      status = raw;
      message = typeof candidate.message === 'string' ? candidate.message : undefined;
    }
  }
  if (status === undefined || status < 400 || status >= 500 || !(status in CODE_BY_STATUS)) {
    if (status === 503) return new ApiError('ServiceUnavailable', message ?? 'service unavailable');
    return undefined;
  }
  const code = CODE_BY_STATUS[status];
  if (code === 'NotFound') return new ApiError(code, message ?? 'not found');
  if (code === 'RequestEntityTooLarge') return new ApiError(code, 'request content is too large');
  return new ApiError(code, message ?? 'bad request');
}

/** `{code, message, details?}` with the status of the code table: the answer of every failed request. */
export function sendErrorBody(response: Response, answer: ApiError): void {
  const body: Record<string, unknown> = { code: answer.code, message: answer.message };
  if (answer.details !== undefined) body.details = answer.details;
  response.status(answer.status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** The one place that turns any error into `{code, message, details?}` with the status of the code table. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');
  private lastOutageLog = 0;

  /** Absent only in unit tests that build the filter alone. */
  constructor(@Optional() private readonly audit?: AuditTrail) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    if (exception instanceof NotModified) {
      this.afterAudit(request, 304, () => response.status(304).end());
      return;
    }
    const error = exception instanceof ApiError ? exception : (this.databaseUnavailable(exception) ?? fromForeign(exception));

    if (!error) {
      // Through the request's logger when there is one: the line then carries the request id.
      const log = requestLog(request);
      if (log) {
        log.error({ err: exception }, `${request.method} ${routeTemplate(request)} failed`);
      } else {
        this.logger.error(
          `${request.method} ${request.path}: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`,
        );
      }
    }
    const answer = error ?? new ApiError('InternalError', 'internal error');

    if (response.headersSent) {
      // A streamed body already started: the only honest signal left is to cut the connection.
      response.destroy();
      return;
    }
    this.afterAudit(request, answer.status, () => {
      // An error is never cached, whatever a success would have allowed (security-headers.ts).
      response.set({ ...answer.headers, 'Cache-Control': 'no-store' });
      // Representation headers set for a success (ETag, Content-Range...) must not leak into an error.
      for (const header of ['ETag', 'Content-Range', 'Content-Disposition', 'Repr-Digest', 'Accept-Ranges', 'Link']) {
        if (!answer.headers || !(header in answer.headers)) response.removeHeader(header);
      }
      this.send(response, answer);
    });
  }

  /** Writes the error body; a protocol with its own error format (TAXII) overrides this, and only this. */
  protected send(response: Response, answer: ApiError): void {
    sendErrorBody(response, answer);
  }

  /**
   * Refused and failed requests are audited too (a guard refusal never reaches the audit interceptor): the
   * answer waits for the entry. An entry that cannot be stored is logged; the refusal is answered anyway.
   */
  private afterAudit(request: Request, status: number, answer: () => void): void {
    const stored = this.audit?.afterOutcome(request, status);
    if (!stored) {
      answer();
      return;
    }
    // Its failure was logged by the trail.
    void stored
      .catch(() => undefined)
      .then(answer)
      .catch((error: unknown) => this.logger.error(`answering ${request.method} ${routeTemplate(request)} failed: ${String(error)}`));
  }

  /** The database is down or out of connections: a 503 the client may retry, not a 500. */
  private databaseUnavailable(exception: unknown): ApiError | undefined {
    if (!isDatabaseUnavailable(exception)) return undefined;
    if (Date.now() - this.lastOutageLog >= OUTAGE_LOG_INTERVAL_MS) {
      this.lastOutageLog = Date.now();
      this.logger.warn(`the database is not reachable (${exception instanceof Error ? exception.message : String(exception)}): answering 503`);
    }
    return CommonErrors.databaseUnavailable();
  }
}
