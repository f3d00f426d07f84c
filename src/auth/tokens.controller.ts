import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyOnly, Principal } from '../common/guard/access.decorators.js';
import { Principal as PrincipalType } from '../common/guard/access.js';
import { TokenView } from './dto/token.dto.js';
import { TokensService } from './tokens.service.js';

@ApiTags('auth')
@Controller('auth/token')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Get()
  @ApiKeyOnly()
  @ApiOperation({
    summary: 'Exchange an API key for a bearer token',
    description:
      'Takes the key in `X-Api-Key` (a bearer token cannot make another token) and returns a token to send as ' +
      "`Authorization: Bearer <accessToken>`, valid for `expiresIn` seconds and never beyond the key's own " +
      "expiry. The token carries the key's permissions as they are at each request, so a revoked key's tokens stop " +
      'working at once. When a request answers 401, get a new token and repeat. Needs no permission and is not ' +
      'counted against request limits.',
  })
  @ApiOkResponse({ type: TokenView })
  issue(@Principal() caller: PrincipalType): TokenView {
    return this.tokens.issue(caller.keyId, caller.expiresAt);
  }
}
