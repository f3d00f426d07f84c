import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { SizedRow } from '../../common/pagination/page.js';
import type { ObjectConditions } from '../../read-policy/read-policy.js';
import type { MarkedRow } from '../object-rows.js';
import { networkSearch } from './network-statements.js';

/** The network search's read (its statement, and why its plan holds: network-statements.ts). */
@Injectable()
export class NetworkRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A keyset page of the objects of the collection whose address or network is `within` or `contains` `network`, under `policy`. */
  search(
    mode: 'within' | 'contains',
    policy: ObjectConditions,
    page: { collectionId: number; network: string; afterId: number; limit: number; maxBytes: number },
  ): Promise<(MarkedRow & SizedRow & { position: string })[]> {
    const search = networkSearch(mode, policy);
    return this.dataSource.query(search.text, search.parameters.values({ ...page, ...policy.values() }));
  }
}
