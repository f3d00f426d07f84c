import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ObjectKey } from '../../common/indicators/indicators.js';
import type { ReadPolicy, ReadScope } from '../../read-policy/read-policy.js';
import type { SightingSummaryView } from '../../sightings/dto/sighting.dto.js';
import type { StoredObject } from '../object-rows.js';
import { heldStatement, LOOKUP_STATEMENT } from './lookup-statements.js';

/** A lookup's row: a key's position, a collection holding it, whether it is within the byte cap, the object. */
export type LookupRow = { i: string; collection: string; within: boolean; sightings: SightingSummaryView | null } & StoredObject;

/** The lookups' reads (their statements and why they are one probe per key: lookup-statements.ts). */
@Injectable()
export class LookupRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The positions (from 1) of the keys a live object the policy lets the caller see holds in a collection of its scope. */
  held(policy: ReadPolicy, keys: readonly ObjectKey[]): Promise<{ i: string }[]> {
    const { text, parameters } = heldStatement(policy);
    const { readsAll, readable } = policy.scope;
    return this.dataSource.query(
      text,
      parameters.values({ types: keys.map((key) => key.type), values: keys.map((key) => key.value), readsAll, readable, ...policy.values() }),
    );
  }

  /** Every match of the distinct keys `[type, value]` in the collections of `scope` (and of `collections` when named). */
  lookup(keys: readonly string[][], { readsAll, readable }: ReadScope, collections: string[] | null, maxBytes: number): Promise<LookupRow[]> {
    return this.dataSource.query(
      LOOKUP_STATEMENT.text,
      LOOKUP_STATEMENT.parameters.values({
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
