import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { isoUtc } from '../intel/change-records.js';
import type { SightingSummaryView } from './dto/sighting.dto.js';

/** The rows of `table` (aliased `alias`) of the keys in `keys`, a jsonb array of `{type, value}`: one probe each. */
const ofKeys = (keys: string, table: string, alias: string) =>
  `FROM jsonb_array_elements(${keys}) ${alias}k JOIN ${table} ${alias} ON ${alias}.key_type = ${alias}k->>'type' AND ${alias}.key_value = ${alias}k->>'value'`;

/**
 * The summary of an object whose keys are the jsonb array `keys`, as a jsonb view (null when none of its
 * keys was sighted): the per-key totals added up, and the distinct sources of all its keys counted once
 * (`sighting_source` keeps them per key, so a source seen on two keys of one object counts once). A scalar
 * subquery, so that a statement listing objects (lookup) shows their summaries without another round trip;
 * kept here with the tables it reads. Sums of bigints are exact in jsonb numbers, and in JSON up to 2^53.
 */
export function sightingSummarySql(keys: string): string {
  return `(SELECT jsonb_build_object('count', sum(s.count), 'falsePositives', sum(s.false_positives),
                 'firstAt', ${isoUtc('min(s.first_at)')}, 'lastAt', ${isoUtc('max(s.last_at)')},
                 'sources', (SELECT count(DISTINCT src.source) ${ofKeys(keys, 'sighting_source', 'src')}))
            ${ofKeys(keys, 'sighting_summary', 's')}
          HAVING count(*) > 0)`;
}

/**
 * Summaries of objects for the areas that show one object (provenance, the console): exported by
 * SightingSummariesModule, which needs nothing of the intel area, so intel can import it.
 */
@Injectable()
export class SightingSummariesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The summary of one object by its keys (for `…/objects/provenance`); null when never sighted. */
  async summaryOf(keys: readonly ObjectKey[]): Promise<SightingSummaryView | null> {
    const [row]: { sightings: SightingSummaryView | null }[] = await this.dataSource.query(
      `SELECT ${sightingSummarySql('$1::jsonb')} AS sightings`,
      [JSON.stringify(keys.map(({ type, value }) => ({ type, value })))],
    );
    return row.sightings;
  }
}
