import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { normalizeKey, type ObjectKey } from '../../common/indicators/indicators.js';
import type { SightingSummaryView } from '../../sightings/dto/sighting.dto.js';
import { type StoredObject, storedObject } from '../object-rows.js';
import type { ReadPolicy } from '../../read-policy/read-policy.js';
import type { ListSet } from '../../warninglists/warninglist-matcher/index.js';
import type { LookupDto, LookupMatchView, LookupResultView } from './lookup.dto.js';
import { LookupErrors } from './lookup.errors.js';
import { LOOKUP_STATEMENT } from './lookup-statements.js';
import { LIVE } from '../object-statements.js';

/**
 * Which of the keys ($1 types, $2 values) a live object holds in a collection the caller may read ($3 all,
 * or $4 resource ids): the positions (from 1) of those held. One index probe per key, as LOOKUP's.
 */
const HELD = `
  SELECT q.i FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(type, value, i)
   WHERE EXISTS (SELECT FROM intel_object_key k
                   JOIN intel_collection c ON c.id = k.collection_id
                   JOIN intel_object o ON o.id = k.object_id AND ${LIVE('o')}
                  WHERE k.key_type = q.type AND k.value = q.value AND ($3 OR c.resource_id = ANY($4::int[])))`;

@Injectable()
export class LookupService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /**
   * For each of these normalised keys, whether a lookup by this caller would find it (a live object holds it
   * in a collection the caller may read): the areas that act only on such keys (sightings) ask here.
   */
  async heldKeys(policy: ReadPolicy, keys: readonly ObjectKey[]): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const { readsAll, readable } = policy.scope;
    const rows: { i: string }[] = await this.dataSource.query(HELD, [keys.map((key) => key.type), keys.map((key) => key.value), readsAll, readable]);
    const held = keys.map(() => false);
    for (const { i } of rows) held[Number(i) - 1] = true;
    return held;
  }

  async lookup(policy: ReadPolicy, query: LookupDto): Promise<LookupResultView[]> {
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
    const { readsAll, readable } = policy.scope;
    // The lists are read beside the lookup statement (both read committed state).
    const [rows, listed]: [({ i: string; collection: string; within: boolean; sightings: SightingSummaryView | null } & StoredObject)[], ListSet] = await Promise.all([
      keys.length === 0
        ? []
        : this.dataSource.query(
            LOOKUP_STATEMENT.text,
            LOOKUP_STATEMENT.parameters.values({
              types: keys.map(([type]) => type),
              values: keys.map(([, value]) => value),
              readsAll,
              readable,
              collections: query.collections ?? null,
              maxBytes: this.config.pageMaxBytes,
            }),
          ),
      policy.listSet(),
    ]);
    const matches = new Map<number, LookupMatchView[]>();
    const left = new Set<number>();
    for (const { i, collection, within, sightings, ...object } of rows) {
      const position = Number(i);
      if (!within) {
        left.add(position);
        continue;
      }
      if (!matches.has(position)) matches.set(position, []);
      matches.get(position)!.push({ collection, object: storedObject(object), sightings });
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
