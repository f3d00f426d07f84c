import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { PageQueryDto } from '../common/pagination/page.js';
import { ApiConditionalGet, IfMatch } from '../common/tags/tag.js';
import {
  ETAG_HEADER,
  IF_MATCH_HEADER,
  LINK_HEADER,
  SCHEMA_DOCUMENT_OPENAPI,
  SchemaCommonView,
  SchemaIdParamDto,
  SchemaRegistrationView,
} from './dto/schema.dto.js';
import { SchemaRegistryService, type SchemaNamespace } from './schema-registry.service.js';

/**
 * The schema endpoints of one namespace (`/intel/schemas`, `/insight/schemas`): the same operations, each
 * guarded by its own area's resource. `className` keeps the OpenAPI operation ids of the two apart.
 */
export function schemasControllerFor(namespace: SchemaNamespace, className: string): Type<unknown> {
  const what = namespace === 'intel' ? "a collection's objects" : 'enrichment results';
  @ApiTags(namespace)
  @Controller(`${namespace}/schemas`)
  class SchemasController {
    constructor(readonly registry: SchemaRegistryService) {}

    @Post()
    @RequirePermission(namespace, 'Write')
    @ApiOperation({
      summary: `Register a ${namespace} schema`,
      description:
        `Registers a JSON Schema (draft 2020-12) document that validates ${what}. The document carries its own ` +
        'identifier in `schemaID` (letters, digits, `.`, `_`, `~`, `-`); it is stored exactly as sent. The schema ' +
        'validates the whole object `{type, keys, context}`, not only the context: declare `properties` for ' +
        '`type`, `keys` and `context` (and `required`, `additionalProperties` as needed). `$schema`, when present, ' +
        'must be the 2020-12 URI; unknown keywords are annotations.',
    })
    @ApiBody({ schema: SCHEMA_DOCUMENT_OPENAPI })
    @ApiCreatedResponse({ type: SchemaRegistrationView })
    @ApiErrors({ 400: 'InvalidData: not a JSON Schema 2020-12 document with a valid schemaID.', 409: 'DuplicateSchema: the schemaID is taken.' })
    register(@Body() document: Record<string, unknown>) {
      return this.registry.register(namespace, document);
    }

    @Put(':schema_id')
    @HttpCode(204)
    @RequirePermission(namespace, 'Write')
    @ApiOperation({
      summary: `Replace a ${namespace} schema`,
      description:
        'Replaces the document of a schema; the next write validated against it (on any instance) uses the new one. ' +
        'Send the `ETag` of your last `GET` in `If-Match`: a missing tag is 400, a stale one 412 (re-read and ' +
        'repeat). The body must carry the same `schemaID` as the path. A document equal to the current one ' +
        'changes nothing (204, the tag stays); any other difference, reordered keys included, is a new version.',
    })
    @ApiHeader(IF_MATCH_HEADER)
    @ApiBody({ schema: SCHEMA_DOCUMENT_OPENAPI })
    @ApiNoContentResponse()
    @ApiErrors({
      400: 'BadRequest: If-Match missing; InvalidData: an invalid document.',
      404: 'NotFound: no schema has this id.',
      412: 'ResourceModified: a stale tag.',
      422: 'InvalidSchemaID: the schemaID in the body differs from the path.',
    })
    replace(@Param() params: SchemaIdParamDto, @IfMatch() ifMatch: string, @Body() document: Record<string, unknown>) {
      return this.registry.replace(namespace, params.schema_id, ifMatch, document);
    }

    @Get(':schema_id')
    @RequirePermission(namespace, 'Read')
    @ApiOperation({
      summary: `Get a ${namespace} schema`,
      description:
        'Returns the schema document exactly as it was registered, with its version in `ETag`; send that tag in ' +
        '`If-Match` to replace the schema, or in `If-None-Match` to get 304 while it is unchanged.',
    })
    @ApiOkResponse({ schema: SCHEMA_DOCUMENT_OPENAPI, headers: ETAG_HEADER, description: 'The document as registered.' })
    @ApiConditionalGet()
    @ApiErrors({ 404: 'NotFound: no schema has this id.' })
    view(@Param() params: SchemaIdParamDto) {
      return this.registry.view(namespace, params.schema_id);
    }

    @Get()
    @RequirePermission(namespace, 'Read')
    @ApiOperation({
      summary: `List ${namespace} schemas`,
      description:
        'Lists `{schemaID, title}` of every schema of the area in `schemaID` order (byte order). A page is a bare ' +
        'array; the next one, when there is one, is in `Link: <...>; rel="next"`.',
    })
    @ApiOkResponse({ type: [SchemaCommonView], headers: LINK_HEADER, description: 'A page, in schemaID order.' })
    @ApiErrors({ 400: 'InvalidQueryArgument: a malformed cursor or limit.' })
    list(@Query() query: PageQueryDto) {
      return this.registry.list(namespace, query);
    }
  }
  Object.defineProperty(SchemasController, 'name', { value: className });
  return SchemasController;
}
