import { STATUS_CODES } from 'node:http';
import { CallHandler, Catch, createParamDecorator, ExecutionContext, Injectable, NestInterceptor, StreamableFile } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { map, type Observable } from 'rxjs';
import { AllExceptionsFilter } from '../app/all-exceptions.filter.js';
import { CommonErrors, type ApiError } from '../common/errors/api-error.js';
import { TAXII_MAX_CONTENT_LENGTH } from './taxii-limits.js';
import { TaxiiErrors } from './taxii.errors.js';

/** The media type of every TAXII 2.1 response, exactly (TAXII 2.1 §1.6.8). */
export const TAXII_MEDIA_TYPE = 'application/taxii+json;version=2.1';
export const STIX_MEDIA_TYPE = 'application/stix+json;version=2.1';

/** A media type and its parameters, lower-cased. */
interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseMediaRange(text: string): MediaRange {
  const [type, ...params] = text.split(';').map((part) => part.trim());
  return {
    type: type.toLowerCase(),
    params: Object.fromEntries(
      params
        .map((param) => param.split('=').map((side) => side.trim()))
        .filter((pair) => pair.length === 2)
        .map(([name, value]) => [name.toLowerCase(), value.replace(/^"(.*)"$/, '$1').toLowerCase()]),
    ),
  };
}

/** TAXII 2.1 itself: `application/taxii+json` with `version=2.1`, or without a version (the latest, this one). */
function isTaxii21(range: MediaRange): boolean {
  return range.type === 'application/taxii+json' && (range.params.version === undefined || range.params.version === '2.1');
}

/** An `Accept` header allows TAXII 2.1: no header, a TAXII 2.1 range, `application/*` or `*\/*` (with q > 0). */
export function acceptsTaxii(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept
    .split(',')
    .map(parseMediaRange)
    .some((range) => Number(range.params.q ?? '1') > 0 && (range.type === '*/*' || range.type === 'application/*' || isTaxii21(range)));
}

export function isTaxiiContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && isTaxii21(parseMediaRange(contentType));
}

/** TAXII errors (TAXII 2.1 §3.6.1) in place of the service's `{code, message}`, with the TAXII media type. */
@Catch()
export class TaxiiErrorFilter extends AllExceptionsFilter {
  protected override send(response: Response, answer: ApiError): void {
    sendTaxiiError(response, answer);
  }
}

/** A TAXII error message (title, description, http_status, …) as the answer. */
export function sendTaxiiError(response: Response, answer: ApiError): void {
  const body = {
    title: STATUS_CODES[answer.status] ?? 'Error',
    description: answer.message,
    http_status: String(answer.status),
    error_code: answer.code,
    ...(answer.details !== undefined && { details: answer.details }),
  };
  response.status(answer.status).setHeader('Content-Type', TAXII_MEDIA_TYPE);
  response.end(JSON.stringify(body));
}

/** A result with TAXII headers (`X-TAXII-Date-Added-First/Last`) and a status other than 200. */
export class TaxiiResult {
  constructor(
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
    readonly status = 200,
  ) {}
}

/**
 * The media-type rules of every TAXII route: an `Accept` that allows neither TAXII 2.1 nor `*\/*` → 406, a
 * body that is not TAXII 2.1 → 415; a success is written with exactly the TAXII media type.
 */
@Injectable()
export class TaxiiMediaInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const response = context.switchToHttp().getResponse<Response>();
    if (!acceptsTaxii(request.headers.accept)) throw TaxiiErrors.notAcceptable();
    if (request.method === 'POST' && !isTaxiiContentType(request.headers['content-type'])) throw TaxiiErrors.unsupportedMediaType();
    return next.handle().pipe(
      map((result: unknown) => {
        const answer = result instanceof TaxiiResult ? result : new TaxiiResult(result);
        response.status(answer.status);
        for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
        const bytes = answer.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(answer.body));
        return new StreamableFile(bytes, { type: TAXII_MEDIA_TYPE, length: bytes.length });
      }),
    );
  }
}

/** What a body reader leaves when the body was larger than its limit (its bytes were read and dropped). */
export const TOO_LARGE = Symbol('too large');

/**
 * Reads a request body of any media type as bytes, up to `limit`; a larger one is read to its end and
 * dropped (`req.body = TOO_LARGE`), so that the route itself answers 413 in its own error format. Mounted
 * ahead of the JSON body parser, which then finds the body consumed. A body declared larger
 * (`Content-Length`) is refused at once with `refuse` (the connection is closed: its body is never read).
 */
export function boundedBodyReader(limit: number, refuse: (response: Response) => void): RequestHandler {
  return (request: Request & { _body?: boolean }, response: Response, next: NextFunction) => {
    if (request._body) return next();
    request._body = true;
    if (Number(request.headers['content-length'] ?? 0) > limit) {
      response.setHeader('Connection', 'close');
      return refuse(response);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else chunks.length = 0;
    });
    request.on('end', () => {
      request.body = size > limit ? TOO_LARGE : Buffer.concat(chunks);
      next();
    });
    request.on('error', next);
  };
}

/** `@TaxiiQuery() query: URLSearchParams`: the raw query string, where `match[type]` keeps its name. */
export const TaxiiQuery = createParamDecorator(
  (_data: unknown, context: ExecutionContext): URLSearchParams =>
    new URL(context.switchToHttp().getRequest<Request>().originalUrl, 'http://taxii.invalid').searchParams,
);

/** `@RawBody() body`: the bytes `boundedBodyReader` read (or TOO_LARGE). */
export const RawBody = createParamDecorator((_data: unknown, context: ExecutionContext): unknown => context.switchToHttp().getRequest<Request>().body);

/**
 * What every request under /taxii2 passes before routing, so that the answers made there are TAXII errors
 * too: a path that is not valid percent-encoding is 400; a body is read as bytes up to max_content_length
 * (413 beyond), whatever the method and media type, and never by the JSON parser.
 */
export function taxiiRequestReader(): RequestHandler {
  const readBody = boundedBodyReader(TAXII_MAX_CONTENT_LENGTH, (response) => sendTaxiiError(response, TaxiiErrors.tooLarge()));
  return (request: Request, response: Response, next: NextFunction) => {
    try {
      request.path.split('/').forEach((segment) => decodeURIComponent(segment));
    } catch {
      return sendTaxiiError(response, CommonErrors.invalidPath('the path is not valid percent-encoding'));
    }
    readBody(request, response, next);
  };
}
