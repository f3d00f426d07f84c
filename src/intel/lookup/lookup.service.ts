import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error.js';
import type { Principal } from '../../common/guard/access.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { normalizeKey, type ObjectKey } from '../../common/indicators/indicators.js';
import { CollectionsService } from '../collections.service.js';
import { type StoredObject, storedObject } from '../objects.repository.js';
import type { LookupDto, LookupMatchView, LookupResultView } from './lookup.dto.js';
import { LookupErrors } from './lookup.errors.js';
import { LOOKUP_STATEMENT } from './lookup-statements.js';

@Injectable()
export class LookupService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly collections: CollectionsService,
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
    const rows: ({ i: string; collection: string; within: boolean } & StoredObject)[] =
      keys.length === 0
        ? []
        : await this.dataSource.query(
            LOOKUP_STATEMENT.text,
            LOOKUP_STATEMENT.parameters.values({
              types: keys.map(([type]) => type),
              values: keys.map(([, value]) => value),
              readsAll,
              readable,
              collections: query.collections ?? null,
              maxBytes: this.config.pageMaxBytes,
            }),
          );
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
      const position = distinct.get(`${key.type}\n${key.value}`)!;
      if (!error && left.has(position)) error = tooLarge;
      return error
        ? { key, error: { code: error.code, message: error.message }, matches: [] }
        : { key, matches: matches.get(position) ?? [] };
    });
  }
}
