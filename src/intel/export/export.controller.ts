import { Controller, Get, Head, Param, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AcceptsBasicCredentials, RequirePermission } from '../../common/guard/access.decorators.js';
import { ApiErrors } from '../../common/http/api-errors.decorator.js';
import { CollectionIdParamDto } from '../dto/object.dto.js';
import { CONTENT_TYPES } from './export-formats.js';
import { EXPORT_HEADERS, ExportQueryDto } from './export.dto.js';
import { ExportService } from './export.service.js';

const COLLECTION = { parent: 'intel', param: 'collection_id' } as const;
const ERRORS = {
  400:
    'InvalidQueryArgument: an unknown format, keyType, urlScheme or warninglists, or keyType/urlScheme on a format that does not take it; ' +
    'a minScore that is no number from 0 to 100, a malformed scoreAt. ' +
    'InvalidData: a maxTLP that names no TLP level.',
  404: 'NotFound: no collection has this name.',
};
/** The body by format (the media types of CONTENT_TYPES without their parameters). */
const EXPORT_CONTENT = Object.fromEntries(Object.values(CONTENT_TYPES).map((type) => [type.split(';')[0], { schema: { type: 'string' } }]));
const IF_NONE_MATCH = {
  name: 'If-None-Match',
  required: false,
  description: 'The `ETag` of an earlier export with the same query: while the content is the same, 304 without a body.',
};

@ApiTags('intel')
@Controller('intel/collections/:collection_id/export')
@AcceptsBasicCredentials('intel export')
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  // Declared before GET: Express would otherwise answer HEAD with the GET route.
  @Head()
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'Headers of an export',
    description:
      'Answers with the headers the same GET would have (`ETag`, `Last-Modified`, `Content-Type`, `X-Excluded-Count`, `X-TLP-Max`) and ' +
      'no body, without reading the objects once the same content was exported or asked for before (else its marking takes one ' +
      'aggregate read, and when warninglists leave objects out their count one read of the keys): a poller learns whether the list changed.',
  })
  @ApiHeader(IF_NONE_MATCH)
  @ApiOkResponse({ description: 'No body.', headers: EXPORT_HEADERS })
  @ApiResponse({ status: 304, description: 'Not modified: the tag in `If-None-Match` is current.', headers: EXPORT_HEADERS })
  @ApiErrors(ERRORS)
  head(@Param() params: CollectionIdParamDto, @Query() query: ExportQueryDto, @Req() request: Request, @Res() response: Response) {
    return this.exports.send(params.collection_id, query, request, response);
  }

  @Get()
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'Export a collection (blocklists, CSV, NDJSON, STIX)',
    description:
      'Streams every live object of the collection as one consistent snapshot (expired objects are left out): ' +
      '`txt` one normalised key value per line, each once (`keyType` for one type per list, `urlScheme=omit` for ' +
      'URLs without `http(s)://`); `csv` (RFC 4180, header `type,key type,key value,expiresAt,context,tlp`, the ' +
      'context as JSON) one row per key; `ndjson` one object per line as the listing shows it, with its `tlp` (not its `score`, which moves with time); `stix` a STIX 2.1 ' +
      'bundle: the identity and extension definition, then per object the last version of its indicator and its ' +
      'observable, exactly as TAXII serves them (each with `object_marking_refs`: its TLP 2.0 marking definition). ' +
      "Objects marked above the key's `maxTLP` (narrowed by `maxTLP=`) are not there, nor counted; `X-TLP-Max` is the most " +
      'restrictive marking among those exported. `minScore` exports exactly the objects whose score at `scoreAt` (default: ' +
      'the time of the request, and the `ETag` then changes with every request) is at least that. Objects with a key on an enabled warninglist acting at ' +
      '`excludeFromExport` or beyond are left out (`X-Excluded-Count` says how many; `warninglists=ignore` keeps them). Also takes ' +
      '`Authorization: Basic` (any user name, the API key as password) for firewalls. `ETag` changes exactly ' +
      'when the content may have: send it in `If-None-Match` to get 304 without a body. A body cut short (a ' +
      'closed connection without its end) is incomplete: discard it.',
  })
  @ApiHeader(IF_NONE_MATCH)
  @ApiOkResponse({ description: 'The export, streamed.', headers: EXPORT_HEADERS, content: EXPORT_CONTENT })
  @ApiResponse({ status: 304, description: 'Not modified: the tag in `If-None-Match` is current.', headers: EXPORT_HEADERS })
  @ApiErrors(ERRORS)
  export(@Param() params: CollectionIdParamDto, @Query() query: ExportQueryDto, @Req() request: Request, @Res() response: Response) {
    return this.exports.send(params.collection_id, query, request, response);
  }
}
