import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal, RequirePermission } from '../common/guard/access.decorators.js';
import type { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ClientGone } from '../common/http/long-poll.js';
import { ReadPolicies } from '../read-policy/read-policies.service.js';
import { ChangesService } from './changes.service.js';
import {
  CHANGES_LINK_HEADER,
  ChangesQueryDto,
  CollectionIdParamDto,
  DeleteObjectQueryDto,
  LISTING_LINK_HEADER,
  ListObjectsQueryDto,
  ObjectAddDto,
  ObjectChangeView,
  ScoredObjectView,
  WriteMarkingQueryDto,
} from './dto/object.dto.js';
import { ObjectsService } from './objects.service.js';
import { Origin, type WriteOrigin } from './write-origin.js';

const COLLECTION = { parent: 'intel', param: 'collection_id' } as const;

@ApiTags('intel')
@Controller('intel/collections/:collection_id/objects')
export class ObjectsController {
  constructor(
    private readonly objects: ObjectsService,
    private readonly changes: ChangesService,
    private readonly policies: ReadPolicies,
  ) {}

  @Post()
  @HttpCode(204)
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({
    summary: 'Add or update an object',
    description:
      'Writes `{type, keys, context}`. Key values are normalised first (hashes lower case, domain names in ' +
      'lower-case ASCII without a trailing dot, URLs and IP addresses in canonical form), then the whole object is ' +
      "validated against the collection's current schema. When the keys name an object already stored, its " +
      'context is replaced and the new keys are added to it (an `Update` change); otherwise a new object is stored ' +
      '(`Add`). Keys naming two objects, or a key whose type the object has with another value, are 422 ' +
      '`KeySetConflict`. Sending an object exactly as stored ' +
      'writes nothing and makes no change record. Optional `expiresAt` (in the future) sets when the object ' +
      "expires; without it the collection's `objectTTLSeconds` applies from this write (each add then moves the " +
      'expiry: an `Update`). An expired object is gone: adding its keys again creates it anew (`Add`). `tlp` marks ' +
      "the write (default: the collection's `defaultTLP`); the same object with another marking is an `Update`.",
  })
  @ApiNoContentResponse({ description: 'Stored (or already stored as sent).' })
  @ApiErrors({
    400:
      'InvalidData: a malformed body (a missing or unknown field, a bad type, nesting deeper than 256), expiresAt malformed or not in the future, ' +
      'tlp not a TLP level.',
    404: 'NotFound: no collection has this name.',
    422:
      'InvalidKeyFormat: a key value its type does not allow. InvalidKeySet: no keys, or keys that do not fit the ' +
      'object type. KeySetConflict: the keys name two stored objects, or clash with a key of the stored one. SchemaCheckFail: the object does ' +
      'not satisfy the schema (details: AbsoluteKeywordLocation, InstanceLocation, Message, errors). Warninglisted: a key is on ' +
      'an enabled warninglist whose action is rejectOnIngest (details.warning names the list, entry and match).',
  })
  async add(@Origin('api') origin: WriteOrigin, @Param() params: CollectionIdParamDto, @Query() query: WriteMarkingQueryDto, @Body() form: ObjectAddDto) {
    await this.objects.add(origin, params.collection_id, form, query.tlp);
  }

  @Delete()
  @HttpCode(204)
  @RequirePermission(COLLECTION, 'Write')
  @ApiOperation({
    summary: 'Delete an object',
    description:
      'Deletes the object that has the key `objectKeyType`/`objectKey` (any one of its keys names it), recording a ' +
      '`Remove` change. The key is normalised as on writes. Deleting an object that is not there is a success and ' +
      'records nothing.',
  })
  @ApiNoContentResponse({ description: 'Deleted, or not there.' })
  @ApiErrors({
    400: 'InvalidQueryArgument: objectKeyType or objectKey missing or malformed.',
    404: 'NotFound: no collection has this name.',
    422: 'InvalidKeyFormat: a key value its type does not allow.',
  })
  remove(@Origin('api') origin: WriteOrigin, @Param() params: CollectionIdParamDto, @Query() query: DeleteObjectQueryDto) {
    return this.objects.remove(origin, params.collection_id, query);
  }

  @Get()
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'List objects',
    description:
      'Lists the objects in insertion order, each as `{type, keys, context}`. A page is a bare array; the next page ' +
      'is in `Link: <...>; rel="next"`. The first page (no `cursor`) also carries `Link: <...>; rel="related"`: the ' +
      'change-feed position of exactly that snapshot. Read every page, then follow the feed from that link to stay ' +
      'in sync without missing or repeating a change. `sightedSince` and `excludeFalsePositives` list only objects ' +
      'sighted since then, or not mostly false positives (POST /intel/sightings); `minScore` only objects whose score ' +
      'at `scoreAt` (default: now) is at least that, exactly, pages full while more match; the feed itself is not filtered. ' +
      'Each object shows its `score` at `scoreAt` (default: now).',
  })
  @ApiOkResponse({
    type: [ScoredObjectView],
    headers: LISTING_LINK_HEADER,
    description: 'A page; next page in `Link: rel="next"`, on the first page the changes cursor in `rel="related"`.',
  })
  @ApiErrors({
    400: 'InvalidQueryArgument: a malformed cursor, limit, sightedSince, excludeFalsePositives, minScore or scoreAt.',
    404: 'NotFound: no collection has this name.',
  })
  list(@Principal() principal: PrincipalType, @Param() params: CollectionIdParamDto, @Query() query: ListObjectsQueryDto) {
    return this.objects.list(this.policies.of(principal, query), params.collection_id, query);
  }

  @Get('changes')
  @RequirePermission(COLLECTION, 'Read')
  @ApiOperation({
    summary: 'Follow the change feed',
    description:
      'Returns the changes (`Add`, `Update`, `Remove`, each with the object as it then was) after `cursor`, oldest ' +
      'first. Start from the `rel="related"` link of the first objects page. A non-empty page links the position ' +
      'after its last change in `rel="next"`; an empty page has no link: everything is delivered, so keep your last ' +
      'cursor, wait, and ask again with it. A cursor older than the retention window is 422 `CursorOutOfRange`: ' +
      'list the objects again. With `wait` (0 to 60 seconds) an empty page is held until a change ' +
      'of the collection commits (on any instance) or the wait runs out. A key whose `maxTLP` is below `TLP:RED` sees ' +
      'no change of an object marked above it: the change that raised an object above it reads as `Remove` with ' +
      'reason `Restricted` (the object as the key last saw it), the one that brought it back as `Add`. A page that ' +
      'read only changes the key may not see is empty and still links `next` (its position moved); only an empty ' +
      'page without a link means the key has caught up. A cursor keeps the ceiling of the listing that issued it ' +
      "(its `maxTLP=` included), narrowed by the key's own, never widened.",
  })
  @ApiOkResponse({
    type: [ObjectChangeView],
    headers: CHANGES_LINK_HEADER,
    description: 'A page; every non-empty page links the position after its last change in `Link: rel="next"`.',
  })
  @ApiErrors({
    400: 'InvalidQueryArgument: the cursor missing, malformed, ahead of the feed or of another collection; a bad limit or wait.',
    404: 'NotFound: no collection has this name.',
    422: 'CursorOutOfRange: changes after the cursor were pruned; list the objects again.',
  })
  changesPage(@Principal() principal: PrincipalType, @Param() params: CollectionIdParamDto, @Query() query: ChangesQueryDto, @ClientGone() gone: AbortSignal) {
    return this.changes.page(this.policies.of(principal), params.collection_id, query, gone);
  }
}
