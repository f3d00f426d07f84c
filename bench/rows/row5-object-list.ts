import { feedStatement, keysetWalkModule } from './feed-setup.js';

const ROW = { id: '5', title: 'object listing of the seeded objects, limit 1000', unit: 'pages/s', target: { minRatio: 0.3 } };

/**
 * Row 5: `scale.readers` concurrent clients each list the whole collection (100k objects, 1 KB context
 * each) with `limit` 1000, following `Link: rel="next"` verbatim, from the first page (which also takes
 * the changes cursor) to the last (no next link). Baseline: the same readers running the service's keyset
 * statement (ObjectFeedRepository.listPage, verbatim, with limit + 1 rows like the service) through raw `pg`.
 */
export const row5 = keysetWalkModule(ROW, 'GET /intel/collections/{collection_id}/objects', (ctx, feed) => {
  const limit = ctx.scale.pageLimit;
  return {
    firstPath: `/intel/collections/${feed.name}/objects?limit=${limit}`,
    pagesPerWalk: Math.ceil(ctx.scale.feedItems / limit),
    // Like sliceAfterId: the (limit + 1)th row only says that a next page exists.
    statement: feedStatement(ctx, feed, 'listPage', limit + 1),
    nextPosition: (positions) => (positions.length > limit ? positions[limit - 1] : 0),
    serviceLabel: 'GET …/objects (limit 1000)',
    baselineLabel: 'raw pg: same keyset SQL',
    walked: `${ctx.scale.feedItems} objects`,
    noun: 'objects',
  };
});
