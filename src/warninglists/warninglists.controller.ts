import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, RequirePermission } from '../common/guard/access.decorators.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ApiConditionalGet, IfMatch } from '../common/tags/tag.js';
import { ETAG_HEADER, IF_MATCH_HEADER, LINK_HEADER } from '../schema-registry/dto/schema.dto.js';
import {
  CheckDto,
  CheckResultView,
  CreateWarninglistDto,
  EntriesQueryDto,
  ImportWarninglistQueryDto,
  ReplaceWarninglistDto,
  UpdateWarninglistDto,
  WarninglistNameParamDto,
  WarninglistNameView,
  WarninglistView,
} from './dto/warninglist.dto.js';
import { WarninglistsService } from './warninglists.service.js';

const NOT_FOUND = { 404: 'NotFound: no warninglist has this name.' };
const ENTRIES_ERRORS =
  'InvalidData: a malformed form, an entry that is not one of the kind (its position in `details.position`), or keyTypes the kind cannot match.';
const TOO_MANY = 'RequestEntityTooLarge: more than 1,000,000 entries, or a body over 64 MiB.';
const UNSUPPORTED_KIND = 'UnsupportedListType: `kind` `regex` (a MISP type lists do not match).';

@ApiTags('intel')
@Controller('intel/warninglists')
export class WarninglistsController {
  constructor(private readonly lists: WarninglistsService) {}

  @Post()
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Create a warninglist',
    description:
      'A list of known-benign values: `values` (the same value; a leading-dot domain also matches its subdomains), ' +
      '`cidr` (addresses and networks inside a listed network, networks holding one), `hostname` (the domain and its ' +
      'subdomains, a URL by its host) or `substring` (inside a domain or URL). Entries are normalised as keys are. ' +
      '`action`: `annotate` (warnings in lookups), `excludeFromExport` (also left out of exports and TAXII), ' +
      '`rejectOnIngest` (also refused on writes). Lists act at read time, on every instance from the next request. ' +
      'A refused list changes nothing.',
  })
  @ApiCreatedResponse({ type: WarninglistNameView })
  @ApiErrors({ 400: ENTRIES_ERRORS, 409: 'DuplicateWarninglist: the name is taken.', 413: TOO_MANY, 422: UNSUPPORTED_KIND })
  create(@Body() form: CreateWarninglistDto) {
    return this.lists.create(form);
  }

  @Get()
  @RequirePermission('intel', 'Read')
  @ApiOperation({
    summary: 'List the warninglists',
    description: 'Every list with its settings and entry count (not its entries), in creation order; a bare array.',
  })
  @ApiOkResponse({ type: [WarninglistView] })
  list() {
    return this.lists.list();
  }

  @Post('import')
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Import a MISP warninglist',
    description:
      'Takes a document as the misp-warninglists project publishes it (`name`, `version`, `description`, `type` ' +
      '`string|substring|hostname|cidr`, `matching_attributes`, `list`). Creates the list (`name` from the query, ' +
      "default the document's name made URL-friendly; `action` default `annotate`; `enabled` default true), or " +
      'replaces the entries, kind, version and description of the list of that name and keeps its other settings. ' +
      '`matching_attributes` give the key types. The view shows the `version` and a SHA-256 of the document.',
  })
  @ApiConsumes('application/json')
  @ApiBody({ description: 'A MISP warninglist document (list.json).', schema: { type: 'object' } })
  @ApiCreatedResponse({ type: WarninglistNameView })
  @ApiErrors({
    400: 'InvalidData: not JSON, a missing or malformed field (named), or a bad entry (its position).',
    413: TOO_MANY,
    422: 'UnsupportedListType: a `regex` list.',
  })
  importMisp(@Body() body: unknown, @Query() query: ImportWarninglistQueryDto) {
    return this.lists.importMisp(body, query);
  }

  @Post('check')
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({
    summary: 'Check values against the warninglists',
    description:
      'Up to 100,000 values, each a string (typed as the lookup types a bare value; defanged forms accepted) or ' +
      '`{type, value}`; answers in order `{type, value, warnings}` with a warning `{list, entry, action, match}` per ' +
      'enabled list that matches. A value that is no valid key gets no warnings. Any valid key may call it.',
  })
  @ApiOkResponse({ type: [CheckResultView] })
  @ApiErrors({ 400: 'InvalidData: a malformed body or value (its position).', 413: 'RequestEntityTooLarge: more than 100,000 values.' })
  check(@Body() form: CheckDto) {
    return this.lists.check(form);
  }

  @Get(':name')
  @RequirePermission('intel', 'Read')
  @ApiOperation({ summary: 'Get a warninglist', description: "The list's settings and entry count, its tag in `ETag` (for `If-Match` on PUT and PATCH)." })
  @ApiOkResponse({ type: WarninglistView, headers: ETAG_HEADER })
  @ApiConditionalGet()
  @ApiErrors({ 400: 'InvalidPathArgument: a malformed name.', ...NOT_FOUND })
  view(@Param() params: WarninglistNameParamDto) {
    return this.lists.view(params.name);
  }

  @Get(':name/entries')
  @RequirePermission('intel', 'Read')
  @ApiOperation({
    summary: "Page a warninglist's entries",
    description: 'The entries as stored (normalised), in list order; a bare array, the next page in `Link: rel="next"`.',
  })
  @ApiOkResponse({ type: [String], headers: LINK_HEADER })
  @ApiErrors({ 400: 'InvalidPathArgument: a malformed name. InvalidQueryArgument: a malformed cursor or limit.', ...NOT_FOUND })
  entries(@Param() params: WarninglistNameParamDto, @Query() query: EntriesQueryDto) {
    return this.lists.entries(params.name, query);
  }

  @Put(':name')
  @HttpCode(204)
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: 'Replace a warninglist',
    description:
      'The whole list again, in the form `POST` takes (settings left out take their defaults), with its `ETag` in ' +
      "`If-Match` (missing: 400, stale: 412). `name` may be left out or be the path's: a PUT does not rename, " +
      'another name is 400 `InvalidData`. A refused PUT changes nothing.',
  })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiNoContentResponse({ description: 'Replaced.' })
  @ApiErrors({
    400: `BadRequest: If-Match missing. ${ENTRIES_ERRORS} A \`name\` other than the path's is InvalidData too.`,
    ...NOT_FOUND,
    412: 'ResourceModified: the tag is stale.',
    413: TOO_MANY,
    422: UNSUPPORTED_KIND,
  })
  replace(@Param() params: WarninglistNameParamDto, @IfMatch() ifMatch: string, @Body() form: ReplaceWarninglistDto) {
    return this.lists.replace(params.name, ifMatch, form);
  }

  @Patch(':name')
  @HttpCode(204)
  @RequirePermission('intel', 'Write')
  @ApiOperation({
    summary: "Change a warninglist's settings",
    description:
      '`description`, `keyTypes` (`null`: the default), `action`, `enabled`, without resending the entries; its `ETag` ' +
      'in `If-Match` (missing: 400, stale: 412). `{}` or the current values change nothing and keep the tag.',
  })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiNoContentResponse({ description: 'Changed (or nothing to change).' })
  @ApiErrors({
    400: 'BadRequest: If-Match missing. InvalidData: a malformed body, or keyTypes the kind cannot match.',
    ...NOT_FOUND,
    412: 'ResourceModified: the tag is stale.',
  })
  update(@Param() params: WarninglistNameParamDto, @IfMatch() ifMatch: string, @Body() form: UpdateWarninglistDto) {
    return this.lists.update(params.name, ifMatch, form);
  }

  @Delete(':name')
  @HttpCode(204)
  @RequirePermission('intel', 'Write')
  @ApiOperation({ summary: 'Delete a warninglist', description: 'Deletes the list (a built-in one too: nothing restores it).' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 400: 'InvalidPathArgument: a malformed name.', ...NOT_FOUND })
  delete(@Param() params: WarninglistNameParamDto) {
    return this.lists.delete(params.name);
  }
}
