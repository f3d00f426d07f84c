import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { Authenticated, Principal } from '../common/guard/access.decorators.js';
import type { Principal as PrincipalType } from '../common/guard/access.js';
import { ApiErrors } from '../common/http/api-errors.decorator.js';
import { ApiRootView, DiscoveryView, StatusView, TaxiiCollectionsView, TaxiiCollectionView } from './dto/taxii.dto.js';
import { TaxiiController } from './taxii-docs.js';
import { TaxiiFeedService } from './taxii-feed.service.js';
import { TAXII_MEDIA_TYPE } from './taxii-http.js';
import { TAXII_MAX_CONTENT_LENGTH } from './taxii-limits.js';
import { TaxiiWritesService } from './taxii-writes.service.js';

/** The one API root. */
export const TAXII_API_ROOT = '/taxii2/api/';

const NOT_ACCEPTABLE = { 406: 'NotAcceptable: the Accept header allows neither TAXII 2.1 nor */*.' };

/** TAXII 2.1 discovery, the API root, its collections and the status of writes. */
@TaxiiController()
@Controller('taxii2')
export class TaxiiServerController {
  constructor(
    private readonly feed: TaxiiFeedService,
    private readonly writes: TaxiiWritesService,
  ) {}

  @Get()
  @Authenticated()
  @ApiOperation({ summary: 'TAXII discovery', description: 'The TAXII 2.1 server: its one API root. Paths are served with and without the final slash.' })
  @ApiOkResponse({ type: DiscoveryView })
  @ApiErrors(NOT_ACCEPTABLE)
  discovery() {
    return {
      title: 'Intelligence Data Service',
      description: 'The intel collections as TAXII 2.1 collections of STIX 2.1 objects.',
      default: TAXII_API_ROOT,
      api_roots: [TAXII_API_ROOT],
    };
  }

  @Get('api')
  @Authenticated()
  @ApiOperation({ summary: 'TAXII API root', description: 'The API root: TAXII 2.1 only, and the largest body a POST may send.' })
  @ApiOkResponse({ type: ApiRootView })
  @ApiErrors(NOT_ACCEPTABLE)
  apiRoot() {
    return {
      title: 'Intel collections',
      description: 'One TAXII collection per intel collection.',
      versions: [TAXII_MEDIA_TYPE],
      max_content_length: TAXII_MAX_CONTENT_LENGTH,
    };
  }

  @Get('api/collections')
  @Authenticated()
  @ApiOperation({
    summary: 'TAXII collections',
    description: 'The intel collections the key may read or write (others are not listed), with `can_read` and `can_write` from its permissions.',
  })
  @ApiOkResponse({ type: TaxiiCollectionsView })
  @ApiErrors(NOT_ACCEPTABLE)
  collections(@Principal() principal: PrincipalType) {
    return this.feed.collectionsFor(principal);
  }

  @Get('api/collections/:collection_id')
  @Authenticated()
  @ApiOperation({ summary: 'A TAXII collection', description: 'One collection the key may read or write, by its TAXII id.' })
  @ApiOkResponse({ type: TaxiiCollectionView })
  @ApiErrors({ ...NOT_ACCEPTABLE, 404: 'NotFound: no collection the key may read or write has this id.' })
  collection(@Principal() principal: PrincipalType, @Param('collection_id') id: string) {
    return this.feed.collectionFor(principal, id);
  }

  @Get('api/status/:status_id')
  @Authenticated()
  @ApiOperation({
    summary: 'The status of a TAXII write',
    description: 'The outcome of a `POST .../objects/`, per object; kept at least 24 hours, for keys that may read or write its collection.',
  })
  @ApiOkResponse({ type: StatusView })
  @ApiErrors({ ...NOT_ACCEPTABLE, 404: 'NotFound: no status has this id (or it is older than 24 hours, or of a collection the key cannot see).' })
  status(@Principal() principal: PrincipalType, @Param('status_id') id: string) {
    return this.writes.status(principal, id);
  }
}
