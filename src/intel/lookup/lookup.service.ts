import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error.js';
import { normalizeKey, type ObjectKey } from '../../common/indicators/indicators.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { ReadPolicy } from '../../read-policy/read-policy.js';
import { scoredView } from '../object-rows.js';
import type { LookupDto, LookupMatchView, LookupResultView } from './lookup.dto.js';
import { LookupErrors } from './lookup.errors.js';
import { LookupRepository } from './lookup.repository.js';

@Injectable()
export class LookupService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: LookupRepository,
  ) {}

  /**
   * For each of these normalised keys, whether a lookup by this caller would find it (a live object holds it
   * in a collection the caller may read): the areas that act only on such keys (sightings) ask here.
   */
  async heldKeys(policy: ReadPolicy, keys: readonly ObjectKey[]): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const rows = await this.repository.held(policy, keys);
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
    // The lists are read beside the lookup statement (both read committed state).
    const [rows, listed] = await Promise.all([
      keys.length === 0 ? [] : this.repository.lookup(policy, keys, query.collections ?? null, this.config.pageMaxBytes),
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
      matches.get(position)!.push({ collection, object: scoredView(object), sightings });
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
