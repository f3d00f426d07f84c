import { Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiResponse } from '@nestjs/swagger';
import { Principal, RequirePermission } from '../common/guard/access.decorators.js';
import type { Principal as Caller } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { Origin, type WriteOrigin } from '../intel/write-origin.js';
import { ReadPolicies } from '../read-policy/read-policies.service.js';
import { EnvelopeBody, EnvelopeView, ManifestView, StatusView, VersionsView } from './dto/taxii.dto.js';
import { DATE_ADDED_HEADERS, TaxiiController, TaxiiPageQuery } from './taxii-docs.js';
import { TaxiiFeedService } from './taxii-feed.service.js';
import { RawBody, TAXII_MEDIA_TYPE, TaxiiQuery } from './taxii-http.js';
import { TaxiiWritesService } from './taxii-writes.service.js';

/** The intel collection named by the TAXII id in the path: permissions are those of the native routes. */
const COLLECTION = { parent: 'intel', param: 'collection_id', resolver: TaxiiFeedService } as const;

const READ_ERRORS = {
  400:
    'InvalidQueryArgument: a malformed added_after, limit, next or match[...]; a next of another collection or object. ' +
    'InvalidData: a maxTLP that names no TLP level.',
  404: 'NotFound: no collection has this id.',
  406: 'NotAcceptable: the Accept header allows neither TAXII 2.1 nor */*.',
};

/** A collection's objects as STIX 2.1, read and written. */
@TaxiiController()
@Controller('taxii2/api/collections/:collection_id')
export class TaxiiObjectsController {
  constructor(
    private readonly feed: TaxiiFeedService,
    private readonly writes: TaxiiWritesService,
    private readonly policies: ReadPolicies,
  ) {}

  @Get('objects')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'TAXII objects',
    description:
      'The collection as STIX 2.1, in the order added: the service identity and the context extension definition, then per change of ' +
      'an object a version of its `indicator` (all its keys in one pattern, the context in a property extension, revoked when the ' +
      'object is removed or expires) followed by its observable. `date_added` strictly increases; poll with `added_after` set to the ' +
      'last `X-TAXII-Date-Added-Last`, or page with `next`: each version is delivered exactly once either way. Indicators and ' +
      "observables carry `object_marking_refs`: the TLP 2.0 marking definition of the object's marking at that version; a version " +
      "marked above the key's `maxTLP` (narrowed by `maxTLP=`) is not served. Every indicator carries `confidence`, its score without " +
      'decay. A TAXII view of the collection (its `scoring.taxiiViews`) serves the objects scoring at least its `minScore` now, each ' +
      'indicator valid until the earlier of its expiry and the time its score falls below that bound.',
  })
  @TaxiiPageQuery('all')
  @ApiOkResponse({ type: EnvelopeView, headers: DATE_ADDED_HEADERS })
  @ApiErrors(READ_ERRORS)
  objects(@Principal() caller: Caller, @Param('collection_id') id: string, @TaxiiQuery() query: URLSearchParams) {
    return this.feed.objects(this.policies.of(caller), id, query);
  }

  @Post('objects')
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({
    summary: 'Add TAXII objects',
    description:
      'An envelope of STIX 2.1 indicators (patterns of `=` or `ISSUBSET` comparisons on file hashes, domain-name, url, ipv4-addr and ' +
      'ipv6-addr values, joined by OR or AND in one observation) and observables; each becomes an object through the batch rules, its ' +
      'context checked against the collection schema. Answered with the status (`complete`): per object a success or a failure ' +
      'with its reason (other object types, other patterns, schema failures). Posting objects again changes nothing.',
  })
  @ApiConsumes(TAXII_MEDIA_TYPE)
  @ApiBody({ type: EnvelopeBody })
  @ApiResponse({ status: 202, type: StatusView, description: 'The status of the write.' })
  @ApiErrors({
    400: 'InvalidData: the body is not JSON or has no objects.',
    403: 'Forbidden: the id is a TAXII view (read-only, `can_write: false`).',
    404: 'NotFound: no collection has this id.',
    406: READ_ERRORS[406],
    413: 'RequestEntityTooLarge: the body is larger than max_content_length, or has more than 10,000 objects.',
    415: 'UnsupportedMediaType: the body is not application/taxii+json;version=2.1.',
  })
  add(@Origin('taxii') origin: WriteOrigin, @Param('collection_id') id: string, @RawBody() body: unknown) {
    return this.writes.post(origin, id, body);
  }

  @Get('objects/:object_id')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'A TAXII object',
    description: 'The versions of one object (the last by default) as an envelope, with the filters of the objects route.',
  })
  @TaxiiPageQuery('all')
  @ApiOkResponse({ type: EnvelopeView, headers: DATE_ADDED_HEADERS })
  @ApiErrors({
    ...READ_ERRORS,
    404: "NotFound: no collection has this id, or no version of the object matches (an object marked above the key's maxTLP has none).",
  })
  object(@Principal() caller: Caller, @Param('collection_id') id: string, @Param('object_id') objectId: string, @TaxiiQuery() query: URLSearchParams) {
    return this.feed.object(this.policies.of(caller), id, objectId, query);
  }

  @Delete('objects/:object_id')
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({
    summary: 'Delete a TAXII object',
    description: "Removes an indicator's object from the collection: a `Remove` change, served as the indicator's last version, revoked.",
  })
  @ApiOkResponse({ description: 'Removed.' })
  @ApiErrors({
    403: 'Forbidden: the id is a TAXII view (read-only, `can_write: false`).',
    404: 'NotFound: no collection has this id, or no live object has this indicator id.',
    406: READ_ERRORS[406],
  })
  remove(@Origin('taxii') origin: WriteOrigin, @Param('collection_id') id: string, @Param('object_id') objectId: string) {
    return this.writes.remove(origin, id, objectId);
  }

  @Get('objects/:object_id/versions')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({ summary: 'Versions of a TAXII object', description: 'The `modified` of every version of the object, oldest first.' })
  @TaxiiPageQuery('versions')
  @ApiOkResponse({ type: VersionsView, headers: DATE_ADDED_HEADERS })
  @ApiErrors({ ...READ_ERRORS, 404: "NotFound: no collection has this id, or the object has no version (an object marked above the key's maxTLP has none)." })
  versions(@Principal() caller: Caller, @Param('collection_id') id: string, @Param('object_id') objectId: string, @TaxiiQuery() query: URLSearchParams) {
    return this.feed.objectVersions(this.policies.of(caller), id, objectId, query);
  }

  @Get('manifest')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({ summary: 'TAXII manifest', description: 'What the objects route serves, as (id, date_added, version, media_type) records.' })
  @TaxiiPageQuery('all')
  @ApiOkResponse({ type: ManifestView, headers: DATE_ADDED_HEADERS })
  @ApiErrors(READ_ERRORS)
  manifest(@Principal() caller: Caller, @Param('collection_id') id: string, @TaxiiQuery() query: URLSearchParams) {
    return this.feed.manifest(this.policies.of(caller), id, query);
  }
}
