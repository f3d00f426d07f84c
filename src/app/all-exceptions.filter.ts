import { ArgumentsHost, Catch, ExceptionFilter, Logger, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditTrail } from '../audit/audit-trail.js';
import { ApiError, CommonErrors } from '../common/errors/api-error.js';
import { fromForeign, sendErrorBody } from '../common/errors/error-body.js';
import { NotModified } from '../common/http/result.interceptor.js';
import { routeTemplate } from '../common/http/route-template.js';
import { requestLog } from '../common/logging/request-logging.js';
import { isDatabaseUnavailable } from '../database/connection-failure.js';
// Every area's error codes in the table before the first answer.
import './error-codes.js';

/** During an outage every request fails alike: one log line per this interval says so. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;

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
        this.logger.error(`${request.method} ${request.path}: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`);
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
