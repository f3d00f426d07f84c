import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError, CommonErrors } from '../../common/errors/api-error.js';
import { normalizeKey } from '../../common/indicators/indicators.js';
import { afterIdCursor, afterIdFromCursor } from '../../common/pagination/cursor.js';
import { keysetPage, type PageResult, pageRequestOf, type SizedRow } from '../../common/pagination/page.js';
import { sizeBoundedPage } from '../../common/pagination/size-bounded-page.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { CollectionsService } from '../collections.service.js';
import type { ObjectView } from '../dto/object.dto.js';
import { isoUtc } from '../change-records.js';
import { type StoredObject, storedObject } from '../objects.repository.js';
import type { NetworkQueryDto } from './network.dto.js';

/**
 * A keyset page (by object id, like the listing) of the objects of collection $1 whose network key
 * satisfies `condition` against $2 (inet), after object $3, at most $4 rows. The conditions are operators
 * of the GiST index on (collection_id, network) (migration AddObjectKeyNetwork). Both steps are fenced
 * (MATERIALIZED) on purpose. Unfenced, for a LIMIT PostgreSQL may walk the key table's object_id index in
 * page order filtering every row, or merge-join the matches with the whole object table in id order
 * (both measured on 40k rows): each is a scan of every collection. Fenced, it reads the matching index
 * entries, sorts only their object ids for the page, and fetches those page rows by primary key, as many
 * as fit in the byte cap $5 (see sizeBoundedPage).
 */
function page(condition: string): string {
  return `WITH hits AS MATERIALIZED (
            SELECT k.object_id FROM intel_object_key k
             WHERE k.collection_id = $1 AND ${condition} AND k.object_id > $3
               -- Expired objects are gone (hidden at once, before the expiry job removes them).
               AND NOT EXISTS (SELECT 1 FROM intel_object x WHERE x.id = k.object_id AND x.expires_at <= now())
          ),
          page AS MATERIALIZED (SELECT object_id FROM hits ORDER BY object_id LIMIT $4)
          ${sizeBoundedPage(
            {
              select: `o.id AS position, o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt"`,
              from: 'FROM page JOIN intel_object o ON o.id = page.object_id',
              orderBy: 'page.object_id',
              rowBytes: 'o.row_bytes',
            },
            '$4',
            '$5',
          )}
          ORDER BY position`;
}

export const NETWORK_SEARCHES = {
  /** Addresses and networks inside $2, $2 itself included. */
  within: page(`k.network <<= $2::inet`),
  /** Networks containing $2, $2 itself included. */
  contains: page(`k.key_type = 'IPNetwork' AND k.network >>= $2::inet`),
};

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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly collections: CollectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async search(collectionName: string, query: NetworkQueryDto): Promise<PageResult<ObjectView>> {
    const request = pageRequestOf(query);
    const collection = await this.collections.findByName(collectionName);
    if ((query.within === undefined) === (query.contains === undefined)) {
      throw CommonErrors.invalidQuery('give exactly one of within and contains');
    }
    const mode = query.within !== undefined ? 'within' : 'contains';
    const network = networkArgument(mode, (query.within ?? query.contains)!);
    const afterId = afterIdFromCursor(request.cursor);
    const rows: (StoredObject & SizedRow & { position: string })[] = await this.dataSource.query(NETWORK_SEARCHES[mode], [
      collection.id,
      network,
      afterId,
      request.limit + 1,
      this.config.pageMaxBytes,
    ]);
    return keysetPage(rows, request.limit, (row) => afterIdCursor(Number(row.position)), storedObject);
  }
}
