import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, Principal, RequirePermission } from '../common/guard/access.decorators.js';
import type { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { PageQueryDto } from '../common/pagination/page.js';
import { ApiConditionalGet, IfMatch } from '../common/tags/tag.js';
import { Origin, type WriteOrigin } from '../intel/write-origin.js';
import { ETAG_HEADER, IF_MATCH_HEADER, LINK_HEADER } from '../schema-registry/dto/schema.dto.js';
import {
  DryRunView,
  RunStartedView,
  RunView,
  SOURCE_FORM_SCHEMA,
  SourceClaimView,
  SourceNameParamDto,
  SourceRegistrationView,
  SourceView,
} from './dto/source.dto.js';
import { SourceRunsService } from './source-runs.service.js';
import { SourcesService } from './sources.service.js';

/** Reading a source needs `Read` on its collection (the resolver names it from the source's name). */
const SOURCE_COLLECTION = { parent: 'intel', param: 'name', resolver: SourcesService } as const;
const NOT_FOUND = { 404: 'NotFound: no source has this name.' };

@ApiTags('sources')
@Controller('intel/sources')
export class SourcesController {
  constructor(
    private readonly sources: SourcesService,
    private readonly runs: SourceRunsService,
  ) {}

  @Post()
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Create a source',
    description:
      'A feed that keeps a collection current (kinds `text`, `csv`, `ndjson`, `taxii21` a TAXII 2.1 collection, `misp` a MISP feed folder), fetched every `intervalSeconds` (the first run at once) ' +
      'on one instance of the deployment. `headers` values and `basicAuth.password` are write-only: views show the header names and ' +
      'the username only. The URL is `http` or `https` without credentials; a literal address SOURCE_DENY_NETWORKS refuses is refused here, ' +
      'a name when it is resolved at each connection. A bad member → 400 InvalidData naming it (`details.field`).',
  })
  @ApiBody({ schema: SOURCE_FORM_SCHEMA as unknown as Record<string, unknown> })
  @ApiCreatedResponse({ type: SourceRegistrationView })
  @ApiErrors({
    400: 'InvalidData: a malformed member (named in `details.field`).',
    409: 'DuplicateSource: the name is taken.',
    422: 'CollectionNotFound: no collection has this name.',
  })
  create(@Body() body: Record<string, unknown>) {
    return this.sources.create(body);
  }

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'List the sources the key may read',
    description: 'The sources of the collections the caller may read, in creation order, paged.',
  })
  @ApiOkResponse({ type: [SourceView], headers: LINK_HEADER, description: 'The readable sources.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: a malformed cursor or limit.' })
  list(@Principal() principal: PrincipalType, @Query() query: PageQueryDto) {
    return this.sources.list(principal, query);
  }

  @Get(':name')
  @RequirePermission(SOURCE_COLLECTION, 'Read')
  @ApiOperation({
    summary: 'Get a source',
    description:
      'The source, its state (`ok`, `failing`, `disabled`), last and next run, failures in a row and claims, with its version in `ETag` ' +
      '(send it in `If-Match` to change it). Needs `Read` on its collection.',
  })
  @ApiOkResponse({ type: SourceView, headers: ETAG_HEADER })
  @ApiConditionalGet()
  @ApiErrors(NOT_FOUND)
  view(@Param() params: SourceNameParamDto) {
    return this.sources.view(params.name);
  }

  @Patch(':name')
  @HttpCode(204)
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Change a source',
    description:
      'Changes the members sent; the others keep their values. A secret left out is kept, `null` clears it. `name` and `collection` ' +
      'cannot change. Re-enabling makes it due at once. Send the `ETag` in `If-Match` (missing: 400, stale: 412).',
  })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiBody({ schema: { ...SOURCE_FORM_SCHEMA, required: [] } as unknown as Record<string, unknown> })
  @ApiNoContentResponse({ description: 'Changed (or nothing to change).' })
  @ApiErrors({ 400: 'BadRequest: If-Match missing. InvalidData: a malformed member.', ...NOT_FOUND, 412: 'ResourceModified: the tag is stale.' })
  update(@Param() params: SourceNameParamDto, @IfMatch() ifMatch: string, @Body() body: Record<string, unknown>) {
    return this.sources.update(params.name, ifMatch, body);
  }

  @Delete(':name')
  @HttpCode(204)
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Delete a source',
    description:
      'Deletes the source, its run log and its claims. Its claims end before the answer: an object no other source and no native write ' +
      'claims is removed (a `Remove` with reason `Withdrawn` in the feed, by the source, with the key and request id of this request).',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(NOT_FOUND)
  delete(@Origin('api') origin: WriteOrigin, @Param() params: SourceNameParamDto) {
    return this.sources.delete(origin, params.name);
  }

  @Get(':name/runs')
  @RequirePermission(SOURCE_COLLECTION, 'Read')
  @ApiOperation({ summary: "A source's run log", description: 'Its runs, newest first, paged; kept 30 days.' })
  @ApiOkResponse({ type: [RunView], headers: LINK_HEADER, description: 'The runs.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: a malformed cursor or limit.', ...NOT_FOUND })
  runLog(@Param() params: SourceNameParamDto, @Query() query: PageQueryDto) {
    return this.sources.runs(params.name, query);
  }

  @Post(':name/runs')
  @HttpCode(202)
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Run a source now',
    description: 'Starts a run at once (its `runID`; follow it in the run log). It does not move `nextRunAt`. 409 while a run holds the source.',
  })
  @ApiAcceptedResponse({ type: RunStartedView })
  @ApiErrors({ ...NOT_FOUND, 409: 'RunInProgress: a run of this source is under way.' })
  start(@Param() params: SourceNameParamDto, @Principal() principal: PrincipalType) {
    return this.runs.start(params.name, principal.keyId);
  }

  @Post(':name/test')
  @HttpCode(200)
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Try a source',
    description:
      'Fetches (without validators) and parses, writes and stores nothing, and answers what a run would do now: the counts, the first ' +
      '100 rejected records, whether it would be suspect, or why it would fail.',
  })
  @ApiOkResponse({ type: DryRunView })
  @ApiErrors(NOT_FOUND)
  test(@Param() params: SourceNameParamDto) {
    return this.runs.test(params.name);
  }

  @Get(':name/objects')
  @RequirePermission(SOURCE_COLLECTION, 'Read')
  @ApiOperation({
    summary: 'The keys a source claims',
    description: 'The object keys the source claims now, by type and value, with `firstSeenAt`, `lastSeenAt` and `missedRuns`, paged.',
  })
  @ApiOkResponse({ type: [SourceClaimView], headers: LINK_HEADER, description: 'The claims.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: a malformed cursor or limit.', ...NOT_FOUND })
  claims(@Param() params: SourceNameParamDto, @Query() query: PageQueryDto) {
    return this.sources.claims(params.name, query);
  }
}
