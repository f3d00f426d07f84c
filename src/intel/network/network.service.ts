import { Inject, Injectable } from '@nestjs/common';
import { ApiError, CommonErrors } from '../../common/errors/api-error.js';
import { normalizeKey } from '../../common/indicators/indicators.js';
import { afterIdCursor, afterIdFromCursor } from '../../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../../common/pagination/page.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { ReadPolicy } from '../../read-policy/read-policy.js';
import { CollectionsService } from '../collections.service.js';
import type { ObjectView } from '../dto/object.dto.js';
import { objectView } from '../object-rows.js';
import type { NetworkQueryDto } from './network.dto.js';
import { NetworkRepository } from './network.repository.js';

/** An IP address or CIDR network normalised as a key of that type is; 400 InvalidQueryArgument otherwise. */
function networkArgument(name: string, value: string): string {
  try {
    return normalizeKey({ type: value.includes('/') ? 'IPNetwork' : 'IPAddress', value }).value;
  } catch (error) {
    if (error instanceof ApiError) {
      throw CommonErrors.invalidQuery(`${name} must be an IPv4 or IPv6 address or a CIDR network without host bits: ${error.message}`);
    }
    throw error;
  }
}

@Injectable()
export class NetworkService {
  constructor(
    private readonly repository: NetworkRepository,
    private readonly collections: CollectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async search(policy: ReadPolicy, collectionName: string, query: NetworkQueryDto): Promise<PageResult<ObjectView>> {
    const request = pageRequestOf(query);
    const collection = await this.collections.findByName(collectionName);
    if ((query.within === undefined) === (query.contains === undefined)) {
      throw CommonErrors.invalidQuery('give exactly one of within and contains');
    }
    const mode = query.within !== undefined ? 'within' : 'contains';
    const network = networkArgument(mode, (query.within ?? query.contains)!);
    const afterId = afterIdFromCursor(request.cursor);
    const rows = await this.repository.search(mode, policy, {
      collectionId: collection.id,
      network,
      afterId,
      limit: request.limit + 1,
      maxBytes: this.config.pageMaxBytes,
    });
    return keysetPage(rows, request.limit, (row) => afterIdCursor(Number(row.position)), objectView);
  }
}
