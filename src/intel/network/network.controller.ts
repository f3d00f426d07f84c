import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal, RequirePermission } from '../../common/guard/access.decorators.js';
import type { Principal as PrincipalType } from '../../common/guard/access.js';
import { ApiErrors } from '../../common/http/api-errors.decorator.js';
import { ReadPolicies } from '../../read-policy/read-policies.service.js';
import { LINK_HEADER } from '../../schema-registry/dto/schema.dto.js';
import { CollectionIdParamDto, ObjectView } from '../dto/object.dto.js';
import { NetworkQueryDto } from './network.dto.js';
import { NetworkService } from './network.service.js';

@ApiTags('intel')
@Controller('intel/collections/:collection_id/objects')
export class NetworkController {
  constructor(
    private readonly network: NetworkService,
    private readonly policies: ReadPolicies,
  ) {}

  @Get('network')
  @RequirePermission({ parent: 'intel', param: 'collection_id' }, 'Read')
  @ApiOperation({
    summary: 'Objects whose IP address or network lies within a network, or networks that contain an address.',
    description:
      'Exactly one of `within` (IPAddress and IPNetwork objects inside the given address or CIDR network, itself ' +
      'included) and `contains` (IPNetwork objects containing it). IPv4 and IPv6; an IPv4 network never matches an ' +
      'IPv6 value or the reverse (also not IPv4-mapped ones). Answered from an index. Pages in insertion order, like the listing.',
  })
  @ApiOkResponse({ type: [ObjectView], headers: LINK_HEADER, description: 'A page; the next one in `Link: rel="next"`.' })
  @ApiErrors({
    400: 'InvalidQueryArgument: neither or both of within and contains, a malformed address or network, a malformed cursor or limit.',
    404: 'NotFound: no collection has this name.',
  })
  search(@Principal() principal: PrincipalType, @Param() params: CollectionIdParamDto, @Query() query: NetworkQueryDto) {
    return this.network.search(this.policies.of(principal), params.collection_id, query);
  }
}
