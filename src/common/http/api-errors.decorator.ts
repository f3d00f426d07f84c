import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiResponse, type ApiResponseOptions } from '@nestjs/swagger';
import type { ErrorCode } from '../errors/api-error.js';

/**
 * The body of every error answer, for the OpenAPI document: one named schema, so that a generated client
 * types every error response with it.
 */
export class ErrorBody {
  // A string, not an enum: a client generated today must still read a code added later.
  @ApiProperty({ type: String, example: 'InvalidData', description: 'What went wrong, as a stable code (see the error table); branch on it.' })
  code: ErrorCode;

  @ApiProperty({ description: 'A sentence for people; its wording may change.' })
  message: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Facts for programs, when the code has any: e.g. `AbsoluteKeywordLocation`, `InstanceLocation`, `Message` ' +
      'and `errors` for `SchemaCheckFail`, the offending field for `InvalidData`.',
  })
  details?: Record<string, unknown>;
}

/** An error response: its description, and the headers it carries besides the body (e.g. `Retry-After`). */
export type ApiErrorDoc = string | { description: string; headers?: ApiResponseOptions['headers'] };

/**
 * `@ApiErrors({ 404: 'NotFound: ...', 422: 'SchemaNotFound' })`: the error statuses a handler answers with,
 * each with the `ErrorBody` schema. Start each description with the codes the status can carry. Statuses that
 * come from the access rule (400 for `X-Api-Version`, 401, 403, 429) are added by the access decorators.
 */
export const ApiErrors = (errors: Record<number, ApiErrorDoc>) =>
  applyDecorators(
    ...Object.entries(errors).map(([status, doc]) => {
      const { description, headers } = typeof doc === 'string' ? { description: doc, headers: undefined } : doc;
      return ApiResponse({ status: Number(status), description, headers, type: ErrorBody });
    }),
  );
