import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { PageQueryDto } from '../common/pagination/page.js';
import { IfMatch } from '../common/tags/tag.js';
import {
  SCHEMA_DOCUMENT_OPENAPI,
  SchemaCommonView,
  SchemaIdParamDto,
  SchemaRegistrationView,
} from '../schema-registry/dto/schema.dto.js';
import { SchemaRegistryService } from '../schema-registry/schema-registry.service.js';

@ApiTags('insight')
@Controller('insight/schemas')
export class InsightSchemasController {
  constructor(private readonly registry: SchemaRegistryService) {}

  @Post()
  @RequirePermission('insight', 'Write')
  @ApiBody({ schema: SCHEMA_DOCUMENT_OPENAPI })
  @ApiCreatedResponse({ type: SchemaRegistrationView })
  register(@Body() document: Record<string, unknown>) {
    return this.registry.register('insight', document);
  }

  @Put(':schema_id')
  @HttpCode(204)
  @RequirePermission('insight', 'Write')
  @ApiBody({ schema: SCHEMA_DOCUMENT_OPENAPI })
  @ApiNoContentResponse()
  replace(@Param() params: SchemaIdParamDto, @IfMatch() ifMatch: string, @Body() document: Record<string, unknown>) {
    return this.registry.replace('insight', params.schema_id, ifMatch, document);
  }

  @Get(':schema_id')
  @RequirePermission('insight', 'Read')
  @ApiOkResponse({ schema: SCHEMA_DOCUMENT_OPENAPI, description: 'The document as registered; the tag is in `ETag`.' })
  view(@Param() params: SchemaIdParamDto) {
    return this.registry.view('insight', params.schema_id);
  }

  @Get()
  @RequirePermission('insight', 'Read')
  @ApiOkResponse({ type: [SchemaCommonView], description: 'A page; the next page is in `Link: rel="next"`.' })
  list(@Query() query: PageQueryDto) {
    return this.registry.list('insight', query);
  }
}
