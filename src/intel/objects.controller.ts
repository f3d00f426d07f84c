import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ObjectFormDto } from '../common/indicators/object-form.dto.js';
import { PageQueryDto } from '../common/pagination/page.js';
import { ChangesService } from './changes.service.js';
import { CollectionIdParamDto, DeleteObjectQueryDto, ObjectChangeView, ObjectView } from './dto/object.dto.js';
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
  add(@Param() params: CollectionIdParamDto, @Body() form: ObjectFormDto) {
    return this.objects.add(params.collection_id, form);
  }

  @Delete()
  @HttpCode(204)
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({ summary: 'Delete the object one of whose keys is given; an absent object is a success.' })
  @ApiNoContentResponse()
  remove(@Param() params: CollectionIdParamDto, @Query() query: DeleteObjectQueryDto) {
    return this.objects.remove(params.collection_id, query);
  }

  @Get()
  @RequirePermission(COLLECTION, 'Read')
  @ApiOkResponse({
    type: [ObjectView],
    description: 'A page; next page in `Link: rel="next"`, on the first page the changes cursor in `rel="related"`.',
  })
  list(@Param() params: CollectionIdParamDto, @Query() query: PageQueryDto) {
    return this.objects.list(params.collection_id, query);
  }

  @Get('changes')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({ summary: 'Follow the change feed; `cursor` is required.' })
  @ApiOkResponse({
    type: [ObjectChangeView],
    description: 'A page; every non-empty page links the position after its last change in `Link: rel="next"`.',
  })
  changesPage(@Param() params: CollectionIdParamDto, @Query() query: PageQueryDto) {
    return this.changes.page(params.collection_id, query);
  }
}
