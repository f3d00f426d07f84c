import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../common/guard/access.js';
import { normalizeKey } from '../common/indicators/indicators.js';
import { decodeCursor, encodeCursor, timeIdCursorGuard } from '../common/pagination/cursor.js';
import { keysetPage, pageRequestOf, type PageResult } from '../common/pagination/page.js';
import { parseDateTime } from '../common/validation/date-time.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { LookupService } from '../intel/lookup/lookup.service.js';
import { ReadPolicies } from '../read-policy/read-policies.service.js';
import { MAX_SIGHTING_ITEMS, type ListSightingsQueryDto, type SightingResultView, type SightingView } from './dto/sighting.dto.js';
import { parseSightingItem, type SightingItem } from './sighting-items.js';
import { SightingErrors } from './sightings.errors.js';
import { SightingsRepository, type SightingRow } from './sightings.repository.js';

/** The newest-first position: `t` the time to the microsecond (UTC), `i` the row id. */
const isSightingCursor = timeIdCursorGuard(/^[1-9]\d{0,17}$/);

@Injectable()
export class SightingsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: SightingsRepository,
    private readonly lookups: LookupService,
    private readonly policies: ReadPolicies,
  ) {}

  /**
   * Records a batch: each item checked on its own (Invalid), then only those whose key a lookup by the
   * caller would find (else Unknown), then an id repeated within the batch counts once (the first); the
   * rest go to the database in one statement, which also decides duplicates of earlier requests.
   */
  async record(principal: Principal, body: unknown): Promise<SightingResultView[]> {
    if (!Array.isArray(body)) throw SightingErrors.notAnArray();
    if (body.length === 0) throw SightingErrors.empty();
    if (body.length > MAX_SIGHTING_ITEMS) throw SightingErrors.tooMany();
    const rules = { defaultSource: `key/${principal.keyId}`, now: new Date(), retentionDays: this.config.sightings.retentionDays };
    const parsed = body.map((raw) => parseSightingItem(raw, rules));
    const results: SightingResultView[] = parsed.map((item) => ('invalid' in item ? { status: 'Invalid', reason: item.invalid } : { status: 'Unknown' }));
    const valid = parsed.flatMap((item, index) => ('invalid' in item ? [] : [{ item, index }]));
    const held = await this.lookups.heldKeys(
      this.policies.of(principal),
      valid.map(({ item }) => item.key),
    );
    const ids = new Set<string>();
    const batch: { item: SightingItem; index: number }[] = [];
    valid.forEach((entry, position) => {
      if (!held[position]) return;
      if (entry.item.id !== null) {
        if (ids.has(entry.item.id)) {
          results[entry.index] = { status: 'Duplicate' };
          return;
        }
        ids.add(entry.item.id);
      }
      // Until the statement says it recorded the item: what it skips is a duplicate of an earlier request.
      results[entry.index] = { status: 'Duplicate' };
      batch.push(entry);
    });
    if (batch.length > 0) {
      for (const position of await this.repository.record(batch.map(({ item }) => item))) results[batch[position].index] = { status: 'Recorded' };
    }
    return results;
  }

  /** The recorded sightings of a key, newest first; none for a key no lookup by the caller would find. */
  async list(principal: Principal, query: ListSightingsQueryDto): Promise<PageResult<SightingView>> {
    const key = normalizeKey({ type: query.objectKeyType, value: query.objectKey });
    const filter = {
      since: timeOf(query.since, 'since'),
      until: timeOf(query.until, 'until'),
      source: query.source ?? null,
      kind: query.kind ?? null,
    };
    const page = pageRequestOf(query);
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, isSightingCursor);
    const [held] = await this.lookups.heldKeys(this.policies.of(principal), [key]);
    const rows = held ? await this.repository.list(key.type, key.value, filter, after, page.limit + 1) : [];
    return keysetPage(rows, page.limit, (row) => encodeCursor({ t: row.position, i: row.id }), viewOf);
  }
}

function timeOf(text: string | undefined, name: string): Date | null {
  if (text === undefined) return null;
  const at = parseDateTime(text);
  if (!at) throw SightingErrors.invalidTime(name);
  return at;
}

function viewOf(row: SightingRow): SightingView {
  return { at: row.at, kind: row.kind, source: row.source, count: Number(row.count) };
}
