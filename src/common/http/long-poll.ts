import { applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiPropertyOptional, ApiQuery } from '@nestjs/swagger';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import type { Request, Response } from 'express';
import { CommonErrors } from '../errors/api-error.js';

/** The longest a request may be held (extensions: `wait` from 0 to 60 seconds). */
export const MAX_WAIT_SECONDS = 60;

const WAIT_PATTERN = /^(?:[0-9]|[1-5][0-9]|60)$/;
const WAIT_MESSAGE = `wait must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`;
const WAIT_DESCRIPTION =
  `Long-poll: when there is nothing to answer yet, hold the request up to this many seconds (0-${MAX_WAIT_SECONDS}, ` +
  'default 0 = answer at once) and answer as soon as there is.';

/** `wait` as a query member of a query DTO (a string there); read it with `waitSecondsOf`. */
export const WaitQuery = () =>
  applyDecorators(
    ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: MAX_WAIT_SECONDS, description: WAIT_DESCRIPTION }),
    IsOptional(),
    Matches(WAIT_PATTERN, { message: WAIT_MESSAGE }),
  );

/** `wait` as a member of a JSON body (a number there). */
export const WaitBody = () =>
  applyDecorators(
    ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: MAX_WAIT_SECONDS, description: WAIT_DESCRIPTION }),
    IsOptional(),
    IsInt({ message: WAIT_MESSAGE }),
    Min(0, { message: WAIT_MESSAGE }),
    Max(MAX_WAIT_SECONDS, { message: WAIT_MESSAGE }),
  );

export function waitSecondsOf(wait: string | number | undefined): number {
  return wait === undefined ? 0 : Number(wait);
}

/**
 * `@WaitSeconds() wait: number` for an endpoint without a query DTO: reads only the `wait` query parameter,
 * so every other one is treated exactly as before (ignored). Document it with `@ApiWaitQuery()`.
 */
export const WaitSeconds = createParamDecorator((_: unknown, context: ExecutionContext): number => {
  const value = context.switchToHttp().getRequest<Request>().query.wait;
  if (value === undefined) return 0;
  if (typeof value !== 'string' || !WAIT_PATTERN.test(value)) throw CommonErrors.invalidQuery(WAIT_MESSAGE);
  return Number(value);
});

export const ApiWaitQuery = () =>
  ApiQuery({ name: 'wait', required: false, schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_SECONDS }, description: WAIT_DESCRIPTION });

/**
 * An AbortSignal that fires when the client goes away before its response was sent, so that a held
 * request releases its waiter at once instead of at its deadline.
 */
export const ClientGone = createParamDecorator((_: unknown, context: ExecutionContext): AbortSignal => {
  const response = context.switchToHttp().getResponse<Response>();
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableEnded) controller.abort();
  });
  return controller.signal;
});
