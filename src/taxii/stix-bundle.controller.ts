import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { BatchReportView } from '../intel/batch/batch.dto.js';
import { CollectionIdParamDto } from '../intel/dto/object.dto.js';
import { Origin, type WriteOrigin } from '../intel/write-origin.js';
import { StixImportService } from './stix-import.service.js';
import { STIX_BUNDLE_TYPES } from './taxii-limits.js';

/** The route of STIX bundle files, for the body reader configureApp mounts ahead of the JSON parser. */
export const STIX_BUNDLE_ROUTE = '/intel/collections/:collection_id/objects/stix-bundle';

@ApiTags('intel')
@Controller('intel/collections/:collection_id/objects')
export class StixBundleController {
  constructor(private readonly imports: StixImportService) {}

  @Post('stix-bundle')
  @HttpCode(200)
  @RequirePermission({ parent: 'intel', param: 'collection_id' }, 'Write')
  @ApiOperation({
    summary: 'Import a STIX 2.1 bundle file',
    description:
      'A bundle as MISP, OpenCTI or a vendor exports it (`{"type": "bundle", "objects": [...]}`): its indicators and observables become ' +
      'objects exactly as through `POST .../objects/batch` (same rules, schema check and change records), mapped as the TAXII route ' +
      'maps them. The report has one item per bundle object, in order: objects the service cannot store (relationships, reports, ' +
      'other patterns) are `Failed` with code `StixNotSupported` and the reason; an observable that travels with an indicator of ' +
      'the bundle, or whose keys are stored already, is `Unchanged`.',
  })
  @ApiConsumes(...STIX_BUNDLE_TYPES)
  @ApiBody({
    description: 'A STIX 2.1 bundle.',
    schema: { type: 'object', required: ['objects'], properties: { type: { type: 'string' }, objects: { type: 'array', items: { type: 'object' } } } },
  })
  @ApiOkResponse({ type: BatchReportView, description: 'The report: counts and one entry per bundle object, in order.' })
  @ApiErrors({
    400: 'InvalidData: the body is not JSON or has no objects.',
    404: 'NotFound: no collection has this name.',
    413: 'RequestEntityTooLarge: more than 32 MiB or 10,000 objects.',
    415: 'UnsupportedMediaType: neither application/json nor application/stix+json.',
  })
  import(@Origin('import') origin: WriteOrigin, @Param() params: CollectionIdParamDto, @Req() request: Request) {
    return this.imports.importBundle(origin, params.collection_id, request.body, request.headers['content-type']);
  }
}
