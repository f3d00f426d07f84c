import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import type { Principal } from '../common/guard/access.js';
import type { ObjectKey } from '../common/indicators/index.js';
import { ChangesService } from '../intel/changes.service.js';
import { CollectionsService } from '../intel/collections.service.js';
import { HistoryService } from '../intel/history/history.service.js';
import { LookupService } from '../intel/lookup/lookup.service.js';
import { ObjectsService } from '../intel/objects.service.js';
import { ReadPolicies } from '../read-policy/read-policies.service.js';
import { ScoringService } from '../scoring/scoring.service.js';
import { SightingsService } from '../sightings/sightings.service.js';
import type { Html } from './html.js';
import { cursorParam, nextCursor } from './paging.js';
import { changesFragment, changesView, collectionsView, collectionView, objectView, type KeyedSighting } from './views/collections.view.js';
import type { Screen } from './views/layout.js';

const PAGE_SIZE = '50';
/** How many of an object's recorded sightings its screen lists (the summary counts them all). */
const LATEST_SIGHTINGS = 20;
/** How long one live-tail request waits for a change before htmx asks again. */
const TAIL_WAIT_SECONDS = '25';

/** Collections through the intel area's services (reads only): lists, objects, the change feed, one object with its sightings. */
@Injectable()
export class CollectionsScreen {
  constructor(
    private readonly collections: CollectionsService,
    private readonly objects: ObjectsService,
    private readonly changes: ChangesService,
    private readonly lookups: LookupService,
    private readonly history: HistoryService,
    private readonly sightings: SightingsService,
    private readonly scoring: ScoringService,
    private readonly policies: ReadPolicies,
  ) {}

  async list(principal: Principal, query: Record<string, unknown>): Promise<Screen> {
    const cursor = cursorParam(query);
    const result = await this.collections.list(principal, { cursor, limit: PAGE_SIZE });
    return collectionsView({ collections: result.items, paged: cursor !== undefined, next: nextCursor(result) });
  }

  async collection(principal: Principal, name: string, query: Record<string, unknown>): Promise<Screen> {
    const cursor = cursorParam(query);
    const result = await this.objects.list(this.policies.of(principal), name, { cursor, limit: PAGE_SIZE });
    const schema = (await this.collections.schemaOf(name)).body;
    return collectionView({
      name,
      schema: { id: String(schema.schemaID), ...(typeof schema.title === 'string' && { title: schema.title }) },
      objects: result.items,
      paged: cursor !== undefined,
      next: nextCursor(result),
      changesCursor: result.related?.cursor,
    });
  }

  /**
   * The change feed after `cursor`. For the live tail (`live`): a long-poll through the feed's own wait,
   * answered with the new entries and the next poller. Otherwise a page of the changes, at once.
   */
  async changesAfter(principal: Principal, name: string, query: Record<string, unknown>, live: boolean, gone: AbortSignal): Promise<Screen | Html> {
    const cursor = cursorParam(query);
    if (!cursor) throw new ApiError('InvalidQueryArgument', 'a changes cursor is required');
    const result = await this.changes.page(this.policies.of(principal), name, { cursor, limit: '100', wait: live ? TAIL_WAIT_SECONDS : '0' }, gone);
    // A page of changes the key may not see is empty and moves the position all the same.
    const next = result.hasNext ? result.cursorAfter(result.items.length - 1) : cursor;
    const model = { name, changes: result.items, next };
    return live ? changesFragment(model) : changesView(model);
  }

  async object(principal: Principal, name: string, query: Record<string, unknown>): Promise<Screen> {
    const { type, value } = query;
    if (typeof type !== 'string' || typeof value !== 'string') throw new ApiError('NotFound', 'No such object.');
    // Throws NotFound for an unknown collection, like the API.
    await this.collections.findByName(name);
    const [result] = await this.lookups.lookup(this.policies.of(principal), { keys: [{ type: type as ObjectKey['type'], value }], collections: [name] });
    const object = result?.matches[0]?.object;
    if (!object) throw new ApiError('NotFound', 'No object of this collection has that key (it may have expired or been deleted).');
    const key = { type: type as ObjectKey['type'], value };
    const [history, latestSightings, score] = await Promise.all([
      this.history.history(this.policies.of(principal), name, { objectKeyType: key.type, objectKey: value, cursor: cursorParam(query), limit: PAGE_SIZE }),
      this.latestSightings(principal, object.keys),
      this.scoring.explain(this.policies.of(principal), name, { objectKeyType: key.type, objectKey: value }),
    ]);
    return objectView({
      collection: name,
      object,
      sightings: result.matches[0].sightings,
      latestSightings,
      score,
      key,
      history: history.items,
      olderHistory: nextCursor(history),
    });
  }

  /**
   * The newest LATEST_SIGHTINGS sightings of the object, which the sightings area keeps per key: the
   * newest of each key, merged newest first (ISO times of one format sort as text).
   */
  private async latestSightings(principal: Principal, keys: readonly ObjectKey[]): Promise<KeyedSighting[]> {
    const pages = await Promise.all(
      keys.map(async (key) => {
        const page = await this.sightings.list(principal, { objectKeyType: key.type, objectKey: key.value, limit: String(LATEST_SIGHTINGS) });
        return page.items.map((sighting) => ({ ...sighting, key }));
      }),
    );
    return pages
      .flat()
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
      .slice(0, LATEST_SIGHTINGS);
  }
}
