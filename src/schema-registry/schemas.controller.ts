import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, type Type } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { PageQueryDto } from '../common/pagination/page.js';
import { IfMatch } from '../common/tags/tag.js';
import {
  ETAG_HEADER,
  IF_MATCH_HEADER,
  LINK_HEADER,
  SCHEMA_DOCUMENT_OPENAPI,
  SchemaCommonView,
  SchemaIdParamDto,
  SchemaRegistrationView,
} from './dto/schema.dto.js';
import { type SchemaNamespace, SchemaRegistryService } from './schema-registry.service.js';

/**
 * The schema endpoints of one namespace (`/intel/schemas`, `/insight/schemas`): the same operations, each
 * guarded by its own area's resource. `className` keeps the OpenAPI operation ids of the two apart.
 */
export function schemasControllerFor(namespace: SchemaNamespace, className: string): Type<unknown> {
  @ApiTags(namespace)
  @Controller(`${namespace}/schemas`)
  class SchemasController {
    constructor(readonly registry: SchemaRegistryService) {}

    @Post()
    @RequirePermission(namespace, 'Write')
    @ApiBody({ schema: SCHEMA_DOCUMENT_OPENAPI })
    @ApiCreatedResponse({ type: SchemaRegistrationView })
    @ApiErrors({ 400: 'InvalidData: not a JSON Schema 2020-12 document with a valid schemaID.', 409: 'DuplicateSchema' })
    register(@Body() document: Record<string, unknown>) {
      return this.registry.register(namespace, document);
    }

    @Put(':schema_id')
    @HttpCode(204)
    @RequirePermission(namespace, 'Write')
    @ApiHeader(IF_MATCH_HEADER)
    @ApiBody({ schema: SCHEMA_DOCUMENT_OPENAPI })
    @ApiNoContentResponse()
    @ApiErrors({
      400: 'BadRequest: If-Match missing; InvalidData: an invalid document.',
      404: 'Unknown schema.',
      412: 'ResourceModified: a stale tag.',
      422: 'InvalidSchemaID: the schemaID in the body differs from the path.',
    })
    replace(@Param() params: SchemaIdParamDto, @IfMatch() ifMatch: string, @Body() document: Record<string, unknown>) {
      return this.registry.replace(namespace, params.schema_id, ifMatch, document);
    }

    @Get(':schema_id')
    @RequirePermission(namespace, 'Read')
    @ApiOkResponse({ schema: SCHEMA_DOCUMENT_OPENAPI, headers: ETAG_HEADER, description: 'The document as registered.' })
    @ApiErrors({ 404: 'Unknown schema.' })
    view(@Param() params: SchemaIdParamDto) {
      return this.registry.view(namespace, params.schema_id);
    }

    @Get()
    @RequirePermission(namespace, 'Read')
    @ApiOkResponse({ type: [SchemaCommonView], headers: LINK_HEADER, description: 'A page, in schemaID order.' })
    @ApiErrors({ 400: 'InvalidQueryArgument: a malformed cursor or limit.' })
    list(@Query() query: PageQueryDto) {
      return this.registry.list(namespace, query);
    }
  }
  Object.defineProperty(SchemasController, 'name', { value: className });
  return SchemasController;
}
