import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Principal as PrincipalType } from '../common/guard/access.js';
import { Authenticated, Principal, RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { PageQueryDto } from '../common/pagination/page.js';
import { IfMatch } from '../common/tags/tag.js';
import {
  ETAG_HEADER,
  IF_MATCH_HEADER,
  LINK_HEADER,
  SCHEMA_DOCUMENT_OPENAPI,
} from '../schema-registry/dto/schema.dto.js';
import { CollectionsService } from './collections.service.js';
import {
  CollectionNameParamDto,
  CollectionRegistrationView,
  CollectionView,
  CreateCollectionDto,
  UpdateCollectionDto,
} from './dto/collection.dto.js';

const COLLECTION = { parent: 'intel', param: 'collectionName' } as const;

@ApiTags('intel')
@Controller('intel/collections')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  @Post()
  @RequirePermission('intel', 'Write')
  @ApiCreatedResponse({ type: CollectionRegistrationView })
  @ApiErrors({ 400: 'InvalidData: a malformed name or schemaID.', 409: 'DuplicateCollection', 422: 'SchemaNotFound' })
  create(@Body() form: CreateCollectionDto) {
    return this.collections.create(form);
  }

  @Get()
  @Authenticated()
  @ApiOkResponse({ type: [CollectionView], headers: LINK_HEADER, description: 'The readable collections.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: a malformed cursor or limit.' })
  list(@Principal() principal: PrincipalType, @Query() query: PageQueryDto) {
    return this.collections.list(principal, query);
  }

  @Get(':collectionName')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOkResponse({ type: CollectionView, headers: ETAG_HEADER })
  @ApiErrors({ 404: 'Unknown collection.' })
  view(@Param() params: CollectionNameParamDto) {
    return this.collections.view(params.collectionName);
  }

  @Get(':collectionName/schema')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOkResponse({ schema: SCHEMA_DOCUMENT_OPENAPI, headers: ETAG_HEADER, description: "The schema's document and tag." })
  @ApiErrors({ 404: 'Unknown collection.' })
  schema(@Param() params: CollectionNameParamDto) {
    return this.collections.schemaOf(params.collectionName);
  }

  @Patch(':collectionName')
  @HttpCode(204)
  @RequirePermission(COLLECTION, 'Write')
  @ApiHeader(IF_MATCH_HEADER)
  @ApiNoContentResponse()
  @ApiErrors({
    400: 'BadRequest: If-Match missing; InvalidData: a malformed body.',
    404: 'Unknown collection.',
    412: 'ResourceModified: a stale tag.',
    422: 'SchemaNotFound',
  })
  update(@Param() params: CollectionNameParamDto, @IfMatch() ifMatch: string, @Body() form: UpdateCollectionDto) {
    return this.collections.update(params.collectionName, ifMatch, form);
  }
}
