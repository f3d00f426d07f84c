import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { namedParameters } from '../common/sql/named-parameters.js';
import type { SightingSummaryView } from './dto/sighting.dto.js';
import { sightingSummarySql } from './sighting-sql.js';

/** The object's keys, as JSON (`[{type, value}]`). */
const SUMMARY_PARAMETERS = namedParameters(['keys']);
const SUMMARY = `SELECT ${sightingSummarySql(`${SUMMARY_PARAMETERS.$.keys}::jsonb`)} AS sightings`;

/** The summary read of one object (sighting-sql.ts says why it is a probe per key). */
@Injectable()
export class SightingSummariesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async summaryOf(keys: readonly ObjectKey[]): Promise<SightingSummaryView | null> {
    const [row]: { sightings: SightingSummaryView | null }[] = await this.dataSource.query(
      SUMMARY,
      SUMMARY_PARAMETERS.values({ keys: JSON.stringify(keys.map(({ type, value }) => ({ type, value }))) }),
    );
    return row.sightings;
  }
}
