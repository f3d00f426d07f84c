import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal, RequirePermission } from '../../common/guard/access.decorators.js';
import type { Principal as PrincipalType } from '../../common/guard/access.js';
import { ApiErrors } from '../../common/http/api-errors.decorator.js';
import { ReadPolicies } from '../../read-policy/read-policies.service.js';
import { CollectionIdParamDto } from '../dto/object.dto.js';
import { HistoryEntryView, HistoryQueryDto, ProvenanceQueryDto, ProvenanceView } from './history.dto.js';
import { HistoryService } from './history.service.js';

const COLLECTION = { parent: 'intel', param: 'collection_id' } as const;

const HISTORY_LINK_HEADER = {
  Link: {
    description: '`<...history?objectKeyType=...&objectKey=...&cursor=...&limit=...>; rel="next"` while older changes remain.',
    schema: { type: 'string' },
  },
};

@ApiTags('intel')
@Controller('intel/collections/:collection_id/objects')
export class HistoryController {
  constructor(
    private readonly history: HistoryService,
    private readonly policies: ReadPolicies,
  ) {}

  @Get('history')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'History of an object',
    description:
      'Every change of every life of the object(s) that held the key `objectKeyType`/`objectKey` in the collection ' +
      '(a whole life, also its changes from before the key joined it), newest first: `position`, `at`, `operation`, ' +
      '`reason` (removals), who and how (`keyID`, `requestID`, `via`, `source`) and `obj`, the object as that change ' +
      'wrote it, context whole. The key is normalised as on writes; a key no change mentions gives `[]`. A page is a ' +
      'bare array; older changes follow in `Link: rel="next"`. Kept `HISTORY_RETENTION_DAYS` (365), also past the ' +
      "change feed's retention. A key whose `maxTLP` is below `TLP:RED` sees nothing of an object marked above it " +
      '(`[]`, as for a key no change mentions) and no change marked above it.',
  })
  @ApiOkResponse({ type: [HistoryEntryView], headers: HISTORY_LINK_HEADER, description: 'A page, newest first.' })
  @ApiErrors({
    400: 'InvalidQueryArgument: objectKeyType or objectKey missing or malformed; a malformed cursor or limit.',
    404: 'NotFound: no collection has this name.',
    422: 'InvalidKeyFormat: a key value its type does not allow.',
  })
  historyPage(@Principal() principal: PrincipalType, @Param() params: CollectionIdParamDto, @Query() query: HistoryQueryDto) {
    return this.history.history(this.policies.of(principal), params.collection_id, query);
  }

  @Get('provenance')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'Provenance of an object',
    description:
      'Who vouches for the live object holding the key `objectKeyType`/`objectKey`: its `claims` (`api` once a ' +
      'native write added or updated it, with the first and last such write; then, by name, each source of the ' +
      'collection listing any of its keys, with its first and last listing), `sightings`, its sighting summary ' +
      '(null when none), `warnings`, the enabled warninglists any of its keys is on, and `score`, its score at ' +
      '`scoreAt` (default: now).',
  })
  @ApiOkResponse({ type: ProvenanceView })
  @ApiErrors({
    400: 'InvalidQueryArgument: objectKeyType or objectKey missing or malformed; a malformed scoreAt.',
    404: "NotFound: no collection has this name. ObjectNotFound: no live object of the collection holds the key (or none within the key's maxTLP).",
    422: 'InvalidKeyFormat: a key value its type does not allow.',
  })
  provenance(@Principal() principal: PrincipalType, @Param() params: CollectionIdParamDto, @Query() query: ProvenanceQueryDto) {
    return this.history.provenance(this.policies.of(principal, { scoreAt: query.scoreAt }), params.collection_id, query);
  }
}
