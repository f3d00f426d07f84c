import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Principal as PrincipalType } from '../common/guard/access.js';
import { Principal, RequirePermission } from '../common/guard/access.decorators.js';
import { ApiKeysService } from './api-keys.service.js';
import {
  ApiKeyIdParamDto,
  ApiKeyRegistrationView,
  ApiKeyView,
  CreateApiKeyDto,
  ListApiKeysQueryDto,
} from './dto/api-key.dto.js';

@ApiTags('auth')
@Controller('auth/keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  @RequirePermission('auth', 'Read')
  @ApiOkResponse({ type: [ApiKeyView], description: 'A page; the next page is in `Link: rel="next"`.' })
  list(@Query() query: ListApiKeysQueryDto) {
    return this.keys.list(query);
  }

  @Post()
  @RequirePermission('auth', 'Write')
  @ApiCreatedResponse({ type: ApiKeyRegistrationView })
  create(@Principal() caller: PrincipalType, @Body() form: CreateApiKeyDto) {
    return this.keys.create(caller, form);
  }

  @Post(':api_key_id/revoked')
  @HttpCode(204)
  @RequirePermission('auth', 'Write')
  @ApiNoContentResponse()
  revoke(@Param() params: ApiKeyIdParamDto) {
    return this.keys.revoke(params);
  }
}
