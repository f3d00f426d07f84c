import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { isoUtc } from '../intel/change-records.js';

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
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The sources of the collection (by name) claiming any of the object's keys, by source name. Claims are
   * kept per key, so a source listing two keys of one object claims it once, from the first to the last time.
   */
  async claimsOf(collection: string, keys: readonly ObjectKey[]): Promise<ObjectSourceClaim[]> {
    return this.dataSource.query(
      `SELECT s.name AS source, ${isoUtc('min(c.first_seen_at)')} AS "firstSeenAt", ${isoUtc('max(c.last_seen_at)')} AS "lastSeenAt"
         FROM sources_claim c JOIN sources_source s ON s.id = c.source_id
        WHERE s.collection = $1 AND (c.key_type, c.value) IN (SELECT * FROM unnest($2::text[], $3::text[]))
        GROUP BY s.name ORDER BY s.name`,
      [collection, keys.map((key) => key.type), keys.map((key) => key.value)],
    );
  }
}
