import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import { isoUtc } from '../common/sql/timestamps.js';

/** One source's claim on an object: its first and last listing of any of the object's keys. */
export interface ObjectSourceClaim {
  source: string;
  firstSeenAt: string;
  lastSeenAt: string;
}

/**
 * When a claim (row `c` of sources_claim, `s` its source) was last listed. Runs that repeat the previous
 * body (a 304, or the same normalised objects) count as runs of it (extensions §13) but write no claim row,
 * so that a million-claim source costs nothing per such run: a snapshot claim no run has missed yet was
 * listed by the body of the source's last success, whichever run that was (a suspect run is none, and the
 * claims it listed have their own time), so it was seen then.
 */
export const lastSeenOf = (c: string, s: string) =>
  `CASE WHEN ${c}.missed_runs = 0 AND ${s}.settings->>'mode' = 'snapshot' THEN GREATEST(${c}.last_seen_at, ${s}.last_success_at) ELSE ${c}.last_seen_at END`;

const CLAIMS_OF_PARAMETERS = namedParameters(['collection', 'types', 'values']);
const C = CLAIMS_OF_PARAMETERS.$;

/** Per source of the collection, the claims of any of the keys (given as two arrays: types, values), by source name. */
const CLAIMS_OF = `SELECT s.name AS source, ${isoUtc('min(c.first_seen_at)')} AS "firstSeenAt", ${isoUtc(`max(${lastSeenOf('c', 's')})`)} AS "lastSeenAt"
    FROM sources_claim c JOIN sources_source s ON s.id = c.source_id
   WHERE s.collection = ${C.collection} AND (c.key_type, c.value) IN (SELECT * FROM unnest(${C.types}::text[], ${C.values}::text[]))
   GROUP BY s.name ORDER BY s.name`;

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
    return this.dataSource.query(CLAIMS_OF, CLAIMS_OF_PARAMETERS.values({ collection, types: keys.map((key) => key.type), values: keys.map((key) => key.value) }));
  }
}
