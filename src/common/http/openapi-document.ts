import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { JSON_BODY_LIMIT_MIB } from '../validation/json-body.js';

/**
 * The OpenAPI document served at `/openapi.json`, generated from the controllers' decorators: the access
 * decorators (`src/common/guard/access.decorators.ts`) give each operation its security and its 400/401/403/429
 * answers, `@ApiErrors` the others, `@ApiOperation` its summary and description.
 */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Intelligence Data Service')
      .setDescription(
        'Indicator collections with a change feed, enrichment tasks and their executor queue, and file storage. ' +
          'Authenticate with `Authorization: Bearer <token>` (from `GET /auth/token`) or `X-Api-Key`. Every error ' +
          'answer is JSON `{code, message, details?}` (`ErrorBody`); lists are bare JSON arrays whose next page is ' +
          'in `Link: <...>; rel="next"`. Under `/taxii2` the service speaks TAXII 2.1: its media type, its error ' +
          'messages (`TaxiiErrorBody`) and its paging (`more`, `next`).',
      )
      .setVersion('1')
      .setLicense('MIT', 'https://spdx.org/licenses/MIT.html')
      // Relative: the document describes the instance that serves it, wherever that is.
      .addServer('/')
      .addBearerAuth()
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }, 'apiKey')
      // Only where an operation lists it (exports, TAXII): any user name, the API key as the password.
      .addBasicAuth({ type: 'http', scheme: 'basic', description: 'Any user name; the API key as the password.' }, 'basic')
      // The default of every operation; public ones override it below.
      .addSecurityRequirements('bearer')
      .addSecurityRequirements('apiKey')
      .build(),
  );
  markPublicOperations(document);
  documentJsonBodyLimit(document);
  documentOwnErrorBodies(document);
  return document;
}

/** The OpenAPI extension by which a controller says its errors have another body (see ApiErrorBodyOf). */
export const ERROR_BODY_EXTENSION = 'x-error-body';

/**
 * Operations of a protocol with its own error format (TAXII) say so with ERROR_BODY_EXTENSION
 * (`{ mediaType, schema }`): every error response of theirs gets that media type and schema in place of
 * `ErrorBody`, whichever decorator declared it (the access decorators declare 401, 403...).
 */
function documentOwnErrorBodies(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as (typeof item)[typeof method] & { [ERROR_BODY_EXTENSION]?: { mediaType: string; schema: string } };
      const own = operation?.[ERROR_BODY_EXTENSION];
      if (!operation || !own) continue;
      delete operation[ERROR_BODY_EXTENSION];
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) >= 400 && response && 'description' in response) {
          response.content = { [own.mediaType]: { schema: { $ref: `#/components/schemas/${own.schema}` } } };
        }
      }
    }
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * The JSON body parser is global (configure-app.ts): every operation that takes a JSON body can answer 413
 * before its handler runs. Said here, in the one place that knows it, unless the operation documents its own.
 */
function documentJsonBodyLimit(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      const body = operation?.requestBody;
      if (!operation || !body || !('content' in body) || !body.content['application/json'] || operation.responses['413']) continue;
      operation.responses['413'] = {
        description: `RequestEntityTooLarge: the JSON body is larger than ${JSON_BODY_LIMIT_MIB} MiB.`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
      };
    }
  }
}

/**
 * Every route that takes credentials declares its security through its access decorator; a route without one
 * is `@Public()`. `@nestjs/swagger` drops an empty security list, so the "no credentials" mark (`security: []`,
 * which overrides the document's default) is set here.
 */
function markPublicOperations(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation && !operation.security?.length) operation.security = [];
    }
  }
}
