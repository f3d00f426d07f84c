import { Injectable } from '@nestjs/common';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { SourceClaimsRepository } from './source-claims.repository.js';

/** One source's claim on an object: its first and last listing of any of the object's keys. */
export interface ObjectSourceClaim {
  source: string;
  firstSeenAt: string;
  lastSeenAt: string;
}

/**
 * The claims sources hold on one object, for provenance (extensions §14): exported by SourceClaimsModule,
 * which needs nothing of the intel area, so intel can import it while SourcesModule builds on intel.
 */
@Injectable()
export class SourceClaimsService {
  constructor(private readonly repository: SourceClaimsRepository) {}

  /**
   * The sources of the collection (by name) claiming any of the object's keys, by source name. Claims are
   * kept per key, so a source listing two keys of one object claims it once, from the first to the last time.
   */
  async claimsOf(collection: string, keys: readonly ObjectKey[]): Promise<ObjectSourceClaim[]> {
    return this.repository.claimsOf(collection, keys);
  }
}
