import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiKeyOnly, Principal } from '../common/guard/access.decorators.js';
import { TokenView } from './dto/token.dto.js';
import { TokensService } from './tokens.service.js';

@ApiTags('auth')
@Controller('auth/token')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Get()
  @ApiKeyOnly()
  @ApiOkResponse({ type: TokenView })
  issue(@Principal() caller: PrincipalType): TokenView {
    return this.tokens.issue(caller.keyId, caller.expiresAt);
  }
}
