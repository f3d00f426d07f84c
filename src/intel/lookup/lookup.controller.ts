import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, Principal } from '../../common/guard/access.decorators.js';
import { Principal as PrincipalType } from '../../common/guard/access.js';
import { ApiErrors } from '../../common/http/api-errors.decorator.js';
import { ReadPolicies } from '../../read-policy/read-policies.service.js';
import { LookupDto, LookupResultView } from './lookup.dto.js';
import { LookupService } from './lookup.service.js';

@ApiTags('intel')
@Controller('intel/lookup')
export class LookupController {
  constructor(
    private readonly lookups: LookupService,
    private readonly policies: ReadPolicies,
  ) {}

  @Post()
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({
    summary: 'Find up to 1,000 keys in every collection the key may read.',
    description:
      'Each key is normalised as a stored key is; a malformed one gets its own `error` (InvalidKeyFormat) and no ' +
      'matches. Only collections the caller may read are searched (Read on the collection, or ReadChildren on ' +
      '`intel`); others are skipped silently, also when named in `collections`. One entry per key, in order. The answer ' +
      'is bounded by PAGE_MAX_BYTES: keys past it get their own `error` (RequestEntityTooLarge) and are asked again.',
  })
  @ApiOkResponse({ type: [LookupResultView] })
  @ApiErrors({
    400: 'InvalidData: a malformed body (no keys or more than 1,000, an unknown key type, a malformed collection name).',
    413: 'RequestEntityTooLarge: the JSON body is larger than 16 MB.',
  })
  lookup(@Principal() principal: PrincipalType, @Body() query: LookupDto) {
    return this.lookups.lookup(this.policies.of(principal, { scoreAt: query.scoreAt }), query);
  }
}
