import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal, RequirePermission } from '../common/guard/access.decorators.js';
import type { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ObjectKeyQueryDto } from '../common/indicators/object-form.dto.js';
import { CollectionIdParamDto } from '../intel/dto/object.dto.js';
import { ReadPolicies } from '../read-policy/read-policies.service.js';
import { ScoreExplanationView, ScoreOverrideDto, ScoreQueryDto } from './dto/score.dto.js';
import { ScoringService } from './scoring.service.js';

const COLLECTION = { parent: 'intel', param: 'collection_id' } as const;

const NOT_FOUND = "NotFound: no collection has this name. ObjectNotFound: no live object of the collection holds the key (or none within the key's maxTLP).";
const KEY_ERRORS = {
  404: NOT_FOUND,
  422: 'InvalidKeyFormat: a key value its type does not allow.',
};

@ApiTags('intel')
@Controller('intel/collections/:collection_id/objects')
export class ScoringController {
  constructor(
    private readonly scoring: ScoringService,
    private readonly policies: ReadPolicies,
  ) {}

  @Get('score')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'Explain the score of an object',
    description:
      'Why the live object holding the key `objectKeyType`/`objectKey` has its score at `at` (default now; any time, ' +
      'the current inputs evaluated then): `score` = `base` × `fp` × `decay` rounded half up, or the override while it ' +
      'holds; the anchor of the decay and which input set it; the decay of its type in its collection; when it falls ' +
      "below the collection's `threshold`; its live claims with their Admiralty values; its sightings; the stored override.",
  })
  @ApiOkResponse({ type: ScoreExplanationView })
  @ApiErrors({ 400: 'InvalidQueryArgument: objectKeyType or objectKey missing or malformed; at not an RFC 3339 date-time.', ...KEY_ERRORS })
  explain(@Principal() principal: PrincipalType, @Param() params: CollectionIdParamDto, @Query() query: ScoreQueryDto) {
    return this.scoring.explain(this.policies.of(principal), params.collection_id, query);
  }

  @Put('score')
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({
    summary: 'Override the score of an object',
    description:
      'Sets the score of the live object holding the key to `score` (no decay, no false-positive factor) until `until`, ' +
      'a `DELETE` of this URL, or the end of the object (its removal or expiry; a re-added object has none). Not a ' +
      'change record; audited. Answers the explanation as of now.',
  })
  @ApiOkResponse({ type: ScoreExplanationView })
  @ApiErrors({
    400: 'InvalidQueryArgument: objectKeyType or objectKey missing or malformed. InvalidData: a malformed body (the member named), until not in the future.',
    ...KEY_ERRORS,
  })
  override(@Principal() principal: PrincipalType, @Param() params: CollectionIdParamDto, @Query() query: ObjectKeyQueryDto, @Body() form: ScoreOverrideDto) {
    return this.scoring.override(this.policies.of(principal), principal.keyId, params.collection_id, query, form);
  }

  @Delete('score')
  @HttpCode(204)
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({
    summary: 'End the override of an object',
    description:
      'Ends the override the object holding the key has (204 also when it has none): from now on its score is computed from its inputs again (docs/scoring.md). Not a change record; audited.',
  })
  @ApiNoContentResponse({ description: 'Ended, or there was none.' })
  @ApiErrors({ 400: 'InvalidQueryArgument: objectKeyType or objectKey missing or malformed.', ...KEY_ERRORS })
  clearOverride(@Principal() principal: PrincipalType, @Param() params: CollectionIdParamDto, @Query() query: ObjectKeyQueryDto) {
    return this.scoring.clearOverride(this.policies.of(principal), params.collection_id, query);
  }
}
