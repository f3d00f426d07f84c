import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal, RequirePermission } from '../common/guard/access.decorators.js';
import { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeyIdParamDto, ApiKeyRegistrationView, ApiKeyUsageView, ApiKeyView, CreateApiKeyDto, ListApiKeysQueryDto } from './dto/api-key.dto.js';

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
      'Optional `allowedNetworks` (1 to 100 CIDRs) restricts where the key and its tokens are accepted from.',
  })
  @ApiCreatedResponse({ type: ApiKeyRegistrationView })
  @ApiErrors({
    400: 'InvalidData: a malformed form, `expiresAt` not in the future, or `allowedNetworks` empty, longer than 100 or with an entry that is not a CIDR.',
    403: 'Forbidden: a permission the caller does not hold, a caller with request limits, or a key that would outlive the caller.',
    422: 'ResourceNotFound: an unknown resource id. LimitSetConflict: two limits on one target. InvalidRequestLimit: `limit` < 1, or a limit on an action the new key does not hold.',
  })
  create(@Principal() caller: PrincipalType, @Body() form: CreateApiKeyDto) {
    return this.keys.create(caller, form);
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
  @ApiErrors({ 400: 'InvalidPathArgument: the id is not a positive integer.', 404: 'NotFound: no key has this id.' })
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
  @ApiErrors({ 400: 'InvalidPathArgument: the id is not a positive integer.', 404: 'NotFound: no key has this id.' })
  revoke(@Param() params: ApiKeyIdParamDto) {
    return this.keys.revoke(params);
  }
}
