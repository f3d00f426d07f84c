import { Controller, Headers, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { RequirePermission } from '../../common/guard/access.decorators.js';
import { ApiErrors } from '../../common/http/api-errors.decorator.js';
import { CollectionIdParamDto } from '../dto/object.dto.js';
import { Origin, type WriteOrigin } from '../write-origin.js';
import { ImportQueryDto, ImportView } from './import.dto.js';
import { ImportService } from './import.service.js';

@ApiTags('intel')
@Controller('intel/collections/:collection_id/import')
export class ImportController {
  constructor(private readonly imports: ImportService) {}

  @Post()
  @HttpCode(200)
  @RequirePermission({ parent: 'intel', param: 'collection_id' }, 'Write')
  @ApiOperation({
    summary: 'Import indicators from free text or CSV',
    description:
      '`format=text`: every indicator of a free-form text (a report, an e-mail), defanging undone (`hxxp`, `[.]`, ' +
      '`(.)`, `[:]`, `[at]`): MD5/SHA-1/SHA-256/SHA-512 hashes (a File each), URLs, domain names with a known public ' +
      'suffix, IPv4/IPv6 addresses and CIDR networks; version numbers, file names and unknown suffixes are not ' +
      'indicators. `format=csv`: a header row and the columns named by `typeColumn`, `valueColumn` and ' +
      '`contextColumns`. Values are normalised and deduplicated; every object gets the context of `context` or ' +
      '`X-Import-Context`. The objects are written as one batch (`POST .../objects/batch`, same rules, limits and ' +
      'report, `atomic` as there); `dryRun=true` only answers with them.',
  })
  @ApiConsumes('text/plain', 'text/csv')
  @ApiBody({ description: 'UTF-8 text: a free-form text or a CSV with a header row.', schema: { type: 'string' } })
  @ApiHeader({ name: 'X-Import-Context', required: false, description: 'The context of every object, a JSON object (instead of `context`).' })
  @ApiOkResponse({ type: ImportView, description: 'The objects found and, unless a dry run, the batch report.' })
  @ApiErrors({
    400:
      'InvalidData: an empty, binary or non-UTF-8 body, malformed CSV or a named column missing from its header. ' +
      'InvalidQueryArgument: a bad format, CSV columns missing (csv) or given (text), a context that is not a JSON object. ' +
      'BadRequest: X-Import-Context not a JSON object, or a context given twice.',
    404: 'NotFound: no collection has this name.',
    413: 'RequestEntityTooLarge: more than 10,000 indicators or 32 MiB.',
    415: 'UnsupportedMediaType: a charset other than UTF-8.',
    422: 'BatchRejected (atomic only): an object failed, nothing was written; `details` is the report.',
  })
  import(
    @Origin('import') origin: WriteOrigin,
    @Param() params: CollectionIdParamDto,
    @Query() query: ImportQueryDto,
    @Req() request: Request,
    @Headers('x-import-context') context?: string,
  ) {
    return this.imports.apply(origin, params.collection_id, query, request.body, request.headers['content-type'], context);
  }
}
