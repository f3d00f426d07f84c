import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import type { ReadPolicy } from '../../read-policy/read-policy.js';
import type { SightingSummaryView } from '../../sightings/dto/sighting.dto.js';
import type { ScoredRow } from '../object-rows.js';
import { heldStatement, lookupStatement } from './lookup-statements.js';

/** A lookup's row: a key's position, a collection holding it, whether it is within the byte cap, the object. */
export type LookupRow = { i: string; collection: string; within: boolean; sightings: SightingSummaryView | null } & ScoredRow;

/** The lookups' reads (their statements and why they are one probe per key: lookup-statements.ts). */
@Injectable()
export class LookupRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The positions (from 1) of the keys a live object the policy lets the caller see holds in a collection it may read. */
  held(policy: ReadPolicy, keys: readonly ObjectKey[]): Promise<{ i: string }[]> {
    const { readsAll, readable } = policy.scope;
    const statement = heldStatement(policy);
    return this.dataSource.query(
      statement.text,
      statement.parameters.values({ types: keys.map((key) => key.type), values: keys.map((key) => key.value), readsAll, readable, ...policy.values() }),
    );
  }

  /** Every match the policy lets the caller see of the distinct keys `[type, value]` (in the collections of `collections` when named). */
  lookup(policy: ReadPolicy, keys: readonly string[][], collections: string[] | null, maxBytes: number): Promise<LookupRow[]> {
    const { readsAll, readable } = policy.scope;
    const statement = lookupStatement(policy);
    return this.dataSource.query(
      statement.text,
      statement.parameters.values({
        ...policy.values(),
        types: keys.map(([type]) => type),
        values: keys.map(([, value]) => value),
        readsAll,
        readable,
        collections,
        maxBytes,
      }),
    );
  }
}
