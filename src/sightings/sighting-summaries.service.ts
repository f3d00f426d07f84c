import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import type { SightingSummaryView } from './dto/sighting.dto.js';
import { sightingSummarySql } from './sighting-sql.js';

/** The object's keys, as JSON (`[{type, value}]`). */
const SUMMARY_PARAMETERS = namedParameters(['keys']);

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
      `SELECT ${sightingSummarySql(`${SUMMARY_PARAMETERS.$.keys}::jsonb`)} AS sightings`,
      SUMMARY_PARAMETERS.values({ keys: JSON.stringify(keys.map(({ type, value }) => ({ type, value }))) }),
    );
    return row.sightings;
  }
}
