import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, Principal, RequirePermission } from '../common/guard/access.decorators.js';
import { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { PageQueryDto } from '../common/pagination/page.js';
import { ApiConditionalGet, IfMatch } from '../common/tags/tag.js';
import { ETAG_HEADER, IF_MATCH_HEADER, LINK_HEADER, SCHEMA_DOCUMENT_OPENAPI } from '../schema-registry/dto/schema.dto.js';
import { CollectionsService } from './collections.service.js';
import { CollectionNameParamDto, CollectionRegistrationView, CollectionView, CreateCollectionDto, UpdateCollectionDto } from './dto/collection.dto.js';

const COLLECTION = { parent: 'intel', param: 'collectionName' } as const;

@ApiTags('intel')
@Controller('intel/collections')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  @Post()
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Create a collection',
    description:
      'Creates a collection of objects validated by an intel schema. `name` (1 to 128 of `A-Z a-z 0-9 . _ ~ -`, not ' +
      '`.` or `..`) is how paths name it. The collection is also a protected resource, a child of `intel` (list it ' +
      'with `GET /auth/resources?parentID=2`): keys get `Read`/`Write` on it alone, or on every collection through ' +
      '`ReadChildren`/`WriteChildren` on `intel`. `defaultTLP` (default `TLP:CLEAR`) marks the native writes that name no ' +
      'marking (`tlp`). `scoring` (docs/scoring.md; default: every default) sets how scores decay, the threshold and what happens ' +
      'below it, and the TAXII views of the collection.',
  })
  @ApiCreatedResponse({ type: CollectionRegistrationView })
  @ApiErrors({
    400: 'InvalidData: a malformed name, schemaID, objectTTLSeconds, defaultTLP or scoring (the message names the member).',
    409: 'DuplicateCollection: the name is taken (by a collection, or as a TAXII view alias). DuplicateTaxiiAlias: a view alias is taken.',
    422: 'SchemaNotFound: no intel schema has this schemaID.',
  })
  create(@Body() form: CreateCollectionDto) {
    return this.collections.create(form);
  }

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'List the collections the key may read',
    description:
      'Lists `{name, schemaID}` of the collections the caller may read, in creation order: all of them for a key ' +
      'with `ReadChildren` on `intel`, otherwise those it holds `Read` on. Any valid credentials may call it ' +
      '(no permission needed, so never 403), and it is not counted against request limits.',
  })
  @ApiOkResponse({ type: [CollectionView], headers: LINK_HEADER, description: 'The readable collections.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: a malformed cursor or limit.' })
  list(@Principal() principal: PrincipalType, @Query() query: PageQueryDto) {
    return this.collections.list(principal, query);
  }

  @Get(':collectionName')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'Get a collection',
    description:
      "Returns `{name, schemaID, objectTTLSeconds?, defaultTLP, scoring}` with the collection's version in `ETag`; send it in `If-Match` to change the " +
      'schema. A key that may read every collection gets 404 for an unknown name; any other key gets 403, so names ' +
      'do not leak.',
  })
  @ApiOkResponse({ type: CollectionView, headers: ETAG_HEADER })
  @ApiConditionalGet()
  @ApiErrors({ 404: 'NotFound: no collection has this name.' })
  view(@Param() params: CollectionNameParamDto) {
    return this.collections.view(params.collectionName);
  }

  @Get(':collectionName/schema')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: "Get a collection's schema",
    description:
      "Returns the document of the schema the collection currently uses, as registered, with the schema's " +
      'version in `ETag`: what every object written now is validated against.',
  })
  @ApiOkResponse({ schema: SCHEMA_DOCUMENT_OPENAPI, headers: ETAG_HEADER, description: "The schema's document and tag." })
  @ApiConditionalGet()
  @ApiErrors({ 404: 'NotFound: no collection has this name.' })
  schema(@Param() params: CollectionNameParamDto) {
    return this.collections.schemaOf(params.collectionName);
  }

  @Patch(':collectionName')
  @HttpCode(204)
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({
    summary: "Change a collection's schema, time to live, default marking or scoring",
    description:
      'Moves the collection to another intel schema (`{"schemaID": ...}`); objects already stored are not ' +
      're-validated, later writes are. `objectTTLSeconds` and `defaultTLP` likewise apply to later writes only. ' +
      '`scoring` replaces the scoring whole (members left out take their defaults; `null`: every default). ' +
      "Send the collection's `ETag` in `If-Match` (missing: 400, stale: 412, re-read " +
      'and repeat). `{}` or the current values change nothing and keep the tag. Checks run in this order: 404, ' +
      '412, 422.',
  })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiNoContentResponse({ description: 'Changed (or nothing to change).' })
  @ApiErrors({
    400: 'BadRequest: If-Match missing. InvalidData: a malformed body (defaultTLP not a TLP level, a bad scoring member included).',
    404: 'NotFound: no collection has this name.',
    409: 'DuplicateTaxiiAlias: a new TAXII view alias is taken by another collection or view.',
    412: 'ResourceModified: the tag is stale.',
    422: 'SchemaNotFound: no intel schema has this schemaID.',
  })
  update(@Param() params: CollectionNameParamDto, @IfMatch() ifMatch: string, @Body() form: UpdateCollectionDto) {
    return this.collections.update(params.collectionName, ifMatch, form);
  }
}
