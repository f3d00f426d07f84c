import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../common/indicators/indicators.js';
import { isoUtc } from '../intel/change-records.js';
import type { SightingSummaryView } from './dto/sighting.dto.js';

/**
 * The summary of each object ($1 its position in the request, $2 key types, $3 values: one row per key of
 * each object), over all its keys: the per-key totals added up, and the distinct sources of all its keys
 * counted once (`sighting_source` keeps them per key, so a source seen on two keys of one object counts
 * once). One statement for any number of objects; objects with no sighting yield no row.
 */
const SUMMARIES = `
  WITH k AS (SELECT * FROM unnest($1::int[], $2::text[], $3::text[]) AS k(o, key_type, key_value)),
  totals AS (
    SELECT k.o, sum(s.count) AS count, sum(s.false_positives) AS "falsePositives",
           min(s.first_at) AS first_at, max(s.last_at) AS last_at
      FROM k JOIN sighting_summary s USING (key_type, key_value)
     GROUP BY k.o
  ), sources AS (
    SELECT k.o, count(DISTINCT src.source) AS sources
      FROM k JOIN sighting_source src USING (key_type, key_value)
     GROUP BY k.o
  )
  SELECT t.o, t.count, t."falsePositives", ${isoUtc('t.first_at')} AS "firstAt", ${isoUtc('t.last_at')} AS "lastAt",
         coalesce(sources.sources, 0) AS sources
    FROM totals t LEFT JOIN sources USING (o)`;

/**
 * Summaries of objects for the areas that show objects (lookup, provenance, the console): exported by
 * SightingSummariesModule, which needs nothing of the intel area, so intel can import it.
 */
@Injectable()
export class SightingSummariesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The summary of each object named by its keys, in order: null for an object never sighted. */
  async summariesOf(objects: readonly (readonly ObjectKey[])[]): Promise<(SightingSummaryView | null)[]> {
    const positions: number[] = [];
    const types: string[] = [];
    const values: string[] = [];
    objects.forEach((keys, index) => {
      for (const key of keys) {
        positions.push(index);
        types.push(key.type);
        values.push(key.value);
      }
    });
    const summaries: (SightingSummaryView | null)[] = objects.map(() => null);
    if (positions.length === 0) return summaries;
    const rows: { o: number; count: string; falsePositives: string; firstAt: string | null; lastAt: string | null; sources: string }[] =
      await this.dataSource.query(SUMMARIES, [positions, types, values]);
    for (const row of rows) {
      // Sums of bigints come as text; exact as numbers up to 2^53.
      summaries[row.o] = {
        count: Number(row.count),
        falsePositives: Number(row.falsePositives),
        firstAt: row.firstAt,
        lastAt: row.lastAt,
        sources: Number(row.sources),
      };
    }
    return summaries;
  }

  /** The summary of one object by its keys (for `…/objects/provenance`); null when never sighted. */
  async summaryOf(keys: readonly ObjectKey[]): Promise<SightingSummaryView | null> {
    return (await this.summariesOf([keys]))[0];
  }
}
