import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ObjectFormDto } from '../common/indicators/object-form.dto.js';
import { PageQueryDto } from '../common/pagination/page.js';
import { ChangesService } from './changes.service.js';
import {
  CHANGES_LINK_HEADER,
  ChangesQueryDto,
  CollectionIdParamDto,
  DeleteObjectQueryDto,
  LISTING_LINK_HEADER,
  ObjectChangeView,
  ObjectView,
} from './dto/object.dto.js';
import { ObjectErrors } from './objects.errors.js';
import { ObjectsService } from './objects.service.js';

const COLLECTION = { parent: 'intel', param: 'collection_id' } as const;

@ApiTags('intel')
@Controller('intel/collections/:collection_id/objects')
export class ObjectsController {
  constructor(
    private readonly objects: ObjectsService,
    private readonly changes: ChangesService,
  ) {}

  @Post()
  @HttpCode(204)
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({ summary: 'Add an object, or replace the context and extend the keys of the one its keys name.' })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ description: 'InvalidData: a malformed body.' })
  @ApiNotFoundResponse({ description: 'Unknown collection.' })
  @ApiUnprocessableEntityResponse({ description: 'InvalidKeyFormat, InvalidKeySet, KeySetConflict, SchemaCheckFail.' })
  add(@Param() params: CollectionIdParamDto, @Body() form: ObjectFormDto) {
    return this.objects.add(params.collection_id, form);
  }

  @Delete()
  @HttpCode(204)
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({ summary: 'Delete the object one of whose keys is given; an absent object is a success.' })
  @ApiNoContentResponse()
  @ApiBadRequestResponse({ description: 'InvalidQueryArgument: objectKeyType or objectKey missing or malformed.' })
  @ApiNotFoundResponse({ description: 'Unknown collection.' })
  @ApiUnprocessableEntityResponse({ description: 'InvalidKeyFormat.' })
  remove(@Param() params: CollectionIdParamDto, @Query() query: DeleteObjectQueryDto) {
    return this.objects.remove(params.collection_id, query);
  }

  @Get()
  @RequirePermission(COLLECTION, 'Read')
  @ApiOkResponse({
    type: [ObjectView],
    headers: LISTING_LINK_HEADER,
    description: 'A page; next page in `Link: rel="next"`, on the first page the changes cursor in `rel="related"`.',
  })
  @ApiBadRequestResponse({ description: 'InvalidQueryArgument: a malformed cursor or limit.' })
  @ApiNotFoundResponse({ description: 'Unknown collection.' })
  list(@Param() params: CollectionIdParamDto, @Query() query: PageQueryDto) {
    return this.objects.list(params.collection_id, query);
  }

  @Get('changes')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({ summary: 'Follow the change feed; `cursor` is required.' })
  @ApiOkResponse({
    type: [ObjectChangeView],
    headers: CHANGES_LINK_HEADER,
    description: 'A page; every non-empty page links the position after its last change in `Link: rel="next"`.',
  })
  @ApiBadRequestResponse({ description: 'InvalidQueryArgument: the cursor missing, malformed, or of another collection.' })
  @ApiNotFoundResponse({ description: 'Unknown collection.' })
  @ApiUnprocessableEntityResponse({ description: 'CursorOutOfRange: changes after the cursor were pruned; list again.' })
  changesPage(@Param() params: CollectionIdParamDto, @Query() query: ChangesQueryDto) {
    return this.changes.page(params.collection_id, query);
  }
}
