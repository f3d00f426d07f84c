import { applyDecorators, createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { CommonErrors } from '../errors/api-error.js';

/** Tags are strong ETags of an integer version: `"<n>"`. */
export function formatTag(version: number): string {
  return `"${version}"`;
}

/** A response body with its version; the result interceptor sets `ETag` and answers `If-None-Match`. */
export class TaggedResult<T> {
  constructor(
    readonly body: T,
    readonly version: number,
  ) {}
}

/** OpenAPI for a GET that returns a `TaggedResult`: the optional `If-None-Match` and its 304 answer. */
export const ApiConditionalGet = () =>
  applyDecorators(
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'A tag from an earlier `ETag`: while it is still the current one the answer is 304 without a body.',
    }),
    ApiResponse({ status: 304, description: 'Not modified: the tag in `If-None-Match` is current.' }),
  );

function ifMatchOf(context: ExecutionContext): string | undefined {
  const value = context.switchToHttp().getRequest<Request>().headers['if-match'];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** `@IfMatch() tag: string`: the raw `If-Match` header, required (400 BadRequest when missing or empty). */
export const IfMatch = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const value = ifMatchOf(context);
  if (value === undefined) throw CommonErrors.badRequest('the If-Match header with the resource tag is required');
  return value;
});

/** `@IfMatchWhenSent() tag: string | undefined`: the raw `If-Match` header of an edit that honours it only when sent (missing or empty: undefined). */
export const IfMatchWhenSent = createParamDecorator((_data: unknown, context: ExecutionContext): string | undefined => ifMatchOf(context));

/** The raw If-Match string is compared with the current tag byte for byte (wire-contract §4). */
export function tagMatches(ifMatch: string, version: number): boolean {
  return ifMatch === formatTag(version);
}

/** Throws 412 ResourceModified unless `ifMatch` names the current version. */
export function assertTagMatches(ifMatch: string, version: number): void {
  if (!tagMatches(ifMatch, version)) throw CommonErrors.resourceModified();
}
