// How any error becomes the `{code, message, details?}` answer: for the global filter (src/app), the console's
// guard and the body readers mounted before routing.
import { HttpException } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError, ErrorCode } from './api-error.js';

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
