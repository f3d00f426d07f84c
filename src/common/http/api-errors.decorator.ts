import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';

/** The shape of every error body (wire-contract §5.2), for the OpenAPI document. */
export const ERROR_BODY_OPENAPI = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
  },
};

/** `@ApiErrors({ 404: 'NotFound: ...', 422: 'SchemaNotFound' })`: the error statuses a handler answers with. */
export const ApiErrors = (errors: Record<number, string>) =>
  applyDecorators(
    ...Object.entries(errors).map(([status, description]) =>
      ApiResponse({ status: Number(status), description, schema: ERROR_BODY_OPENAPI }),
    ),
  );
