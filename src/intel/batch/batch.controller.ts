import { Controller, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { RequirePermission } from '../../common/guard/access.decorators.js';
import { ApiErrors } from '../../common/http/api-errors.decorator.js';
import { ObjectFormDto } from '../../common/indicators/object-form.dto.js';
import { CollectionIdParamDto } from '../dto/object.dto.js';
import { Origin, type WriteOrigin } from '../write-origin.js';
import { JSON_TYPE, NDJSON_TYPES } from './batch-body.js';
import { BATCH_BODY_OPENAPI, BatchQueryDto, BatchReportView, RemoveItemDto } from './batch.dto.js';
import { BatchService } from './batch.service.js';

@ApiTags('intel')
@ApiExtraModels(ObjectFormDto, RemoveItemDto)
@Controller('intel/collections/:collection_id/objects')
export class BatchController {
  constructor(private readonly batch: BatchService) {}

  @Post('batch')
  @HttpCode(200)
  @RequirePermission({ parent: 'intel', param: 'collection_id' }, 'Write')
  @ApiOperation({
    summary: 'Add, update and remove many objects in one request (JSON array or NDJSON).',
    description:
      'Items are applied in order, each with exactly the rules, normalisation, schema check and change record of ' +
      '`POST .../objects` (an object form) or `DELETE .../objects` (`{"remove": {type, value}}`); two items naming ' +
      'the same object behave as two single requests in that order. A failed item is reported and changes nothing, ' +
      'the others are applied, all in one transaction. `?atomic=true`: any failed item → nothing is applied, 422. ' +
      'The request counts once against request limits.',
  })
  @ApiConsumes(JSON_TYPE, NDJSON_TYPES[0])
  @ApiBody(BATCH_BODY_OPENAPI)
  @ApiOkResponse({ type: BatchReportView, description: 'The report: counts and one entry per item, in order.' })
  @ApiErrors({
    400: 'InvalidData: not JSON, not an array, a bad NDJSON line, no items; InvalidQueryArgument: atomic is not true/false.',
    404: 'NotFound: no collection has this name.',
    413: 'RequestEntityTooLarge: more than 10,000 items or 32 MiB.',
    415: 'UnsupportedMediaType: neither application/json nor application/x-ndjson.',
    422: 'BatchRejected (atomic only): an item failed, nothing was applied; `details` is the report.',
  })
  apply(@Origin('batch') origin: WriteOrigin, @Param() params: CollectionIdParamDto, @Query() query: BatchQueryDto, @Req() request: Request) {
    return this.batch.apply(origin, params.collection_id, query, request.body, request.headers['content-type']);
  }
}
