import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error.js';
import type { Principal } from '../../common/guard/access.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { normalizeKey, type ObjectKey } from '../../common/indicators/indicators.js';
import { CollectionsService } from '../collections.service.js';
import { isoUtc } from '../change-records.js';
import { LIVE } from '../object-statements.js';
import { type StoredObject, storedObject } from '../objects.repository.js';
import type { ListSet } from '../../warninglists/warninglist-matcher.js';
import { WarninglistMatcherService } from '../../warninglists/warninglist-matcher.service.js';
import type { LookupDto, LookupMatchView, LookupResultView } from './lookup.dto.js';
import { LookupErrors } from './lookup.errors.js';

/**
 * Every distinct key ($1 types, $2 values) in every collection the caller may read ($3 all, or $4 resource
 * ids) and, when given, named in $5: one statement. The key table's primary key leads with the key
 * (migration KeyFirstObjectKeyIndex), so each key costs one index probe that yields its entries in all
 * collections; only the objects of readable collections are then read.
 *
 * Bounded in bytes like a page ($6 = PAGE_MAX_BYTES): `found` adds up the stored sizes of the matches
 * (row_bytes, an inline column: no large value is read for it), and only the keys whose matches start
 * within the cap, in request order, get their objects read (`within`); the first key always does. The
 * large values of the others are never fetched (TOAST is read only for the rows joined), so the process
 * holds at most the cap plus one key's matches.
 */
const LOOKUP = `
  WITH found AS (
    SELECT q.i, c.name AS collection, o.id, o.row_bytes
      FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(type, value, i)
      JOIN intel_object_key k ON k.key_type = q.type AND k.value = q.value
      JOIN intel_collection c ON c.id = k.collection_id
      JOIN intel_object o ON o.id = k.object_id AND ${LIVE('o')}
     WHERE ($3 OR c.resource_id = ANY($4::int[])) AND ($5::text[] IS NULL OR c.name = ANY($5::text[]))
  ), answered AS (
    SELECT i, sum(sum(row_bytes)) OVER (ORDER BY i) - sum(row_bytes) < $6 AS within FROM found GROUP BY i
  )
  SELECT f.i, f.collection, a.within, o.type, o.keys, o.context, ${isoUtc('o.expires_at')} AS "expiresAt"
    FROM found f
    JOIN answered a USING (i)
    LEFT JOIN intel_object o ON a.within AND o.id = f.id
   ORDER BY f.i, f.collection`;

@Injectable()
export class LookupService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly collections: CollectionsService,
    private readonly warninglists: WarninglistMatcherService,
  ) {}

  async lookup(principal: Principal, query: LookupDto): Promise<LookupResultView[]> {
    // Normalised first, each on its own: a malformed key is that key's error, not the request's.
    const entries = query.keys.map((raw): { key: ObjectKey; error?: ApiError } => {
      try {
        return { key: normalizeKey({ type: raw.type, value: raw.value }) };
      } catch (error) {
        if (error instanceof ApiError) return { key: { type: raw.type, value: raw.value }, error };
        throw error;
      }
    });
    const distinct = new Map<string, number>();
    for (const { key, error } of entries) {
      const id = `${key.type}\n${key.value}`;
      if (!error && !distinct.has(id)) distinct.set(id, distinct.size + 1);
    }
    const keys = [...distinct.keys()].map((id) => id.split('\n'));
    const { readsAll, readable } = this.collections.readScope(principal);
    // The lists are read beside the lookup statement (both read committed state).
    const [rows, listed]: [({ i: string; collection: string; within: boolean } & StoredObject)[], ListSet] = await Promise.all([
      keys.length === 0
        ? []
        : this.dataSource.query(LOOKUP, [
            keys.map(([type]) => type),
            keys.map(([, value]) => value),
            readsAll,
            readable,
            query.collections ?? null,
            this.config.pageMaxBytes,
          ]),
      this.warninglists.current(),
    ]);
    const matches = new Map<number, LookupMatchView[]>();
    const left = new Set<number>();
    for (const { i, collection, within, ...object } of rows) {
      const position = Number(i);
      if (!within) {
        left.add(position);
        continue;
      }
      if (!matches.has(position)) matches.set(position, []);
      matches.get(position)!.push({ collection, object: storedObject(object) });
    }
    const tooLarge = LookupErrors.answerTooLarge(this.config.pageMaxBytes);
    return entries.map(({ key, error }) => {
      if (error) return { key, error: { code: error.code, message: error.message }, matches: [], warnings: [] };
      const position = distinct.get(`${key.type}\n${key.value}`)!;
      const warnings = listed.warningsOf(key);
      return left.has(position)
        ? { key, error: { code: tooLarge.code, message: tooLarge.message }, matches: [], warnings }
        : { key, matches: matches.get(position) ?? [], warnings };
    });
  }
}
