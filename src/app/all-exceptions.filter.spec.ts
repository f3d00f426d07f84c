import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ArgumentsHost, BadRequestException, Logger, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { AllExceptionsFilter } from './all-exceptions.filter.js';

interface Written {
  status?: number;
  type?: string;
  body?: string;
  headers: Record<string, string>;
  removed: string[];
}

function hostFor(written: Written): ArgumentsHost {
  const response = {
    headersSent: false,
    status(code: number) {
      written.status = code;
      return response;
    },
    type(value: string) {
      written.type = value;
      return response;
    },
    send(body: string) {
      written.body = body;
      return response;
    },
    set(headers: Record<string, string>) {
      Object.assign(written.headers, headers);
      return response;
    },
    removeHeader(name: string) {
      written.removed.push(name);
    },
    end() {
      return response;
    },
    destroy() {},
  };
  const request = { method: 'GET', originalUrl: '/x' };
  return {
    switchToHttp: () => ({ getResponse: () => response, getRequest: () => request }),
  } as unknown as ArgumentsHost;
}

function answer(exception: unknown) {
  const written: Written = { headers: {}, removed: [] };
  new AllExceptionsFilter().catch(exception, hostFor(written));
  return { ...written, json: JSON.parse(written.body ?? 'null') as Record<string, unknown> };
}

describe('AllExceptionsFilter', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn']));

  it('writes an ApiError as {code, message, details} with the status of the code table and its headers', () => {
    const written = answer(new ApiError('LimitExceeded', 'slow down', { a: 1 }, { 'Retry-After': '5' }));
    expect(written.status).toBe(429);
    expect(written.type).toMatch(/^application\/json/);
    expect(written.json).toEqual({ code: 'LimitExceeded', message: 'slow down', details: { a: 1 } });
    expect(written.headers).toEqual({ 'Retry-After': '5', 'Cache-Control': 'no-store' });
    expect(written.removed).toEqual(expect.arrayContaining(['ETag', 'Link', 'Content-Range']));
  });

  it('omits details when there are none', () => {
    expect(answer(new ApiError('NotFound', 'gone')).json).toEqual({ code: 'NotFound', message: 'gone' });
  });

  it('hides an unexpected error behind 500 InternalError without internals', () => {
    const error = new Error('connection to postgres://user:secret@db failed');
    const written = answer(error);
    expect(written.status).toBe(500);
    expect(written.json).toEqual({ code: 'InternalError', message: 'internal error' });
    expect(written.body).not.toContain('secret');
    expect(written.body).not.toContain('at ');
  });

  it('hides thrown non-errors and 5xx framework errors as 500 InternalError', () => {
    expect(answer('a string').json.code).toBe('InternalError');
    expect(answer(null).json.code).toBe('InternalError');
    expect(answer({ status: 500, type: 'x', message: 'internal detail' }).json).toEqual({
      code: 'InternalError',
      message: 'internal error',
    });
  });

  it('keeps framework 4xx errors with a coded body', () => {
    expect(answer(new NotFoundException('Cannot GET /y'))).toMatchObject({ status: 404, json: { code: 'NotFound' } });
    expect(answer(new PayloadTooLargeException())).toMatchObject({ status: 413, json: { code: 'RequestEntityTooLarge' } });
    expect(answer(new BadRequestException('bad'))).toMatchObject({ status: 400, json: { code: 'BadRequest' } });
  });

  it('maps a body-parser parse failure to 400 InvalidData without echoing the body', () => {
    const cause = Object.assign(new SyntaxError('Unexpected token s in "secret-body"'), { type: 'entity.parse.failed', status: 400 });
    const written = answer(new BadRequestException(cause.message, { cause }));
    expect(written.status).toBe(400);
    expect(written.json.code).toBe('InvalidData');
    expect(written.body).not.toContain('secret-body');
  });
});
