import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, Principal } from '../common/guard/access.decorators.js';
import { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ListSightingsQueryDto, MAX_SIGHTING_ITEMS, SightingItemDto, SightingResultView, SightingView } from './dto/sighting.dto.js';
import { SightingsService } from './sightings.service.js';

@ApiTags('intel')
@ApiExtraModels(SightingItemDto)
@Controller('intel/sightings')
export class SightingsController {
  constructor(private readonly sightings: SightingsService) {}

  @Post()
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({
    summary: 'Report up to 10,000 sightings (hits of indicators seen in your network, or false positives).',
    description:
      'Each item names a key (`type`/`value` or `objectKeyType`/`objectKey`) and is checked on its own: a malformed one ' +
      'is `Invalid` with a `reason`, the others are recorded. Only keys that a lookup by the caller would find (held by ' +
      'a live object of a collection the key may read) are recorded; others are `Unknown` and nothing is stored. A ' +
      'sighting is stored once per key and counts for every object holding it. An item whose `id` was recorded before, ' +
      'in this request or any earlier one, is a `Duplicate` and not counted again. One result per item, in order.',
  })
  @ApiBody({
    description: `A JSON array of 1 to ${MAX_SIGHTING_ITEMS} items.`,
    required: true,
    schema: { type: 'array', minItems: 1, maxItems: MAX_SIGHTING_ITEMS, items: { $ref: '#/components/schemas/SightingItemDto' } },
  })
  @ApiOkResponse({ type: [SightingResultView] })
  @ApiErrors({
    400: 'InvalidData: the body is not a JSON array, or is empty.',
    413: 'RequestEntityTooLarge: more than 10,000 items, or a body larger than 16 MB.',
  })
  record(@Principal() principal: PrincipalType, @Body() body: unknown) {
    return this.sightings.record(principal, body);
  }

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'The recorded sightings of one key, newest first.',
    description:
      'A page of `{at, kind, source, count}`: items as recorded, and once older than SIGHTING_RAW_DAYS their hourly ' +
      'sums per source and kind (`at` the hour). Kept SIGHTING_RETENTION_DAYS. `since` (inclusive) and `until` ' +
      '(exclusive) bound `at`. A key that no lookup by the caller would find answers `[]`.',
  })
  @ApiOkResponse({ type: [SightingView] })
  @ApiErrors({
    400: 'InvalidQueryArgument: objectKeyType or objectKey missing, a malformed since, until, kind, limit or cursor.',
    422: 'InvalidKeyFormat: objectKey is not a valid key of its type.',
  })
  list(@Principal() principal: PrincipalType, @Query() query: ListSightingsQueryDto) {
    return this.sightings.list(principal, query);
  }
}
