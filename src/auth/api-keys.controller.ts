import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal, RequirePermission } from '../common/guard/access.decorators.js';
import { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ApiConditionalGet, IfMatchWhenSent } from '../common/tags/tag.js';
import { ApiKeysService } from './api-keys.service.js';
import {
  ApiKeyIdParamDto,
  ApiKeyRegistrationView,
  ApiKeyUsageView,
  ApiKeyView,
  CreateApiKeyDto,
  ListApiKeysQueryDto,
  UpdateApiKeyDto,
} from './dto/api-key.dto.js';

const ETAG_HEADER = { ETag: { description: 'The key view\'s tag, `"<n>"`; send it back in `If-Match`.', schema: { type: 'string' } } };
const NOT_FOUND = { 400: 'InvalidPathArgument: the id is not a positive integer.', 404: 'NotFound: no key has this id.' };

@ApiTags('auth')
@Controller('auth/keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  @RequirePermission('auth', 'Read')
  @ApiOperation({
    summary: 'List API keys',
    description:
      'Lists every API key in id order, revoked and expired ones included, without their values (a value is shown ' +
      'only once, when the key is created; `prefix` shows its first 8 characters). `revoked=true|false` keeps only revoked or only active keys; ' +
      '`description` keeps keys whose description contains the text, ignoring case. A page is a bare array; the ' +
      'next page, when there is one, is in `Link: <...>; rel="next"` and keeps the filters.',
  })
  @ApiOkResponse({ type: [ApiKeyView], description: 'A page; the next page is in `Link: rel="next"`.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: a malformed `revoked`, `cursor` or `limit`.' })
  list(@Query() query: ListApiKeysQueryDto) {
    return this.keys.list(query);
  }

  @Post()
  @RequirePermission('auth', 'Write')
  @ApiOperation({
    summary: 'Create an API key',
    description:
      'Creates a key with the given permissions (per resource id: `Read`, `Write`, `ReadChildren`, `WriteChildren`) ' +
      'and optional daily request limits, and returns its value once: store it, it cannot be read again. A key can ' +
      'only hand out what it holds: `Read`/`Write` it holds directly or through `*Children` on the parent, ' +
      '`ReadChildren`/`WriteChildren` only where it holds them itself; a key with request limits cannot create keys, ' +
      'and a new key cannot outlive its creator. A limit must target a `(resource, action)` the new key holds. ' +
      'Optional `allowedNetworks` (1 to 100 CIDRs) restricts where the key and its tokens are accepted from. ' +
      "Optional `maxTLP` is the most restrictive TLP marking the key may read (objects marked above it do not exist for it); absent, it is the caller's own " +
      '(`TLP:RED` for an unrestricted caller), and never above it. ' +
      'Optional `reliability` (Admiralty `A`…`F`, default `F`) is how reliable what the key writes counts in scores (docs/scoring.md); any value may be set.',
  })
  @ApiCreatedResponse({ type: ApiKeyRegistrationView })
  @ApiErrors({
    400:
      'InvalidData: a malformed form, `expiresAt` not in the future, `allowedNetworks` empty, longer than 100 or with an entry that is not a CIDR, ' +
      'a `maxTLP` that is no TLP level, or a `reliability` other than `A`…`F`.',
    403: "Forbidden: a permission the caller does not hold, a caller with request limits, a key that would outlive the caller, or a `maxTLP` above the caller's.",
    422: 'ResourceNotFound: an unknown resource id. LimitSetConflict: two limits on one target. InvalidRequestLimit: `limit` < 1, or a limit on an action the new key does not hold.',
  })
  create(@Principal() caller: PrincipalType, @Body() form: CreateApiKeyDto) {
    return this.keys.create(caller, form);
  }

  @Get(':api_key_id')
  @RequirePermission('auth', 'Read')
  @ApiOperation({
    summary: 'Get an API key',
    description:
      "The key's view, as in the listing, with its tag in `ETag` (for `If-Match` on `PATCH`). The tag moves with every change of the view, " +
      'its use included (`lastUsedAt`, `lastUsedAddress`).',
  })
  @ApiOkResponse({ type: ApiKeyView, headers: ETAG_HEADER })
  @ApiConditionalGet()
  @ApiErrors(NOT_FOUND)
  view(@Param() params: ApiKeyIdParamDto) {
    return this.keys.view(params);
  }

  @Patch(':api_key_id')
  @RequirePermission('auth', 'Write')
  @ApiOperation({
    summary: 'Change an API key',
    description:
      "Changes the members sent (`maxTLP`, the key's TLP ceiling; `reliability`, Admiralty `A`…`F`), the others keep their values, and answers " +
      "with the key's view and tag. A key can only set a ceiling it sees itself (at most its own `maxTLP`); any key that may change keys may set " +
      "any `reliability`. The key's next request, on any instance, reads with the new ceiling and writes with the new reliability. " +
      '`If-Match` is honoured when sent (stale: 412, re-read and repeat); `{}` or the current values change nothing and keep the tag. ' +
      'Checks run in this order: 404, 412, 403.',
  })
  @ApiHeader({ name: 'If-Match', required: false, description: "The key view's `ETag`: when sent and stale → 412 ResourceModified." })
  @ApiOkResponse({ type: ApiKeyView, headers: ETAG_HEADER })
  @ApiErrors({
    400: 'InvalidPathArgument: the id is not a positive integer. InvalidData: an unknown member, a `maxTLP` that is no TLP level, or a `reliability` other than `A`…`F`.',
    403: "Forbidden: a `maxTLP` above the caller's own.",
    404: 'NotFound: no key has this id.',
    412: 'ResourceModified: the tag in `If-Match` is stale.',
  })
  update(@Principal() caller: PrincipalType, @Param() params: ApiKeyIdParamDto, @IfMatchWhenSent() ifMatch: string | undefined, @Body() form: UpdateApiKeyDto) {
    return this.keys.update(caller, params, ifMatch, form);
  }

  @Get(':api_key_id/usage')
  @RequirePermission('auth', 'Read')
  @ApiOperation({
    summary: "Get a key's request counts today",
    description:
      'For each request limit of the key (as in `requestLimits`), the requests counted against it today (UTC) ' +
      "and those left. The counts are exact once the key's requests have been answered: the service may wait " +
      'up to about a second for instances to give back units they reserved for the key and did not use.',
  })
  @ApiOkResponse({ type: ApiKeyUsageView })
  @ApiErrors(NOT_FOUND)
  usage(@Param() params: ApiKeyIdParamDto) {
    return this.keys.usage(params);
  }

  @Post(':api_key_id/revoked')
  @HttpCode(204)
  @RequirePermission('auth', 'Write')
  @ApiOperation({
    summary: 'Revoke an API key',
    description:
      'Disables the key for good: from then on every request with it, or with a token made from it, is answered ' +
      '401 (on other instances sharing the database within milliseconds). Revoking a revoked key changes nothing ' +
      'and succeeds.',
  })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiErrors(NOT_FOUND)
  revoke(@Param() params: ApiKeyIdParamDto) {
    return this.keys.revoke(params);
  }
}
