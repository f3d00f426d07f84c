import { feedStatement, keysetWalkModule } from './feed-setup.js';

const ROW = { id: '4', title: 'change feed read of the seeded changes, limit 1000', unit: 'pages/s', target: { minRatio: 0.3 } };

/**
 * Row 4: `scale.readers` concurrent clients each read the whole change feed (100k `Add` changes) from the
 * cursor the collection gave before it was filled, following `Link: rel="next"` verbatim like the SDK,
 * `limit` 1000, until the empty page without a next link. Baseline: the same number of readers running
 * the service's keyset statement (ObjectFeedRepository.changesAfter, verbatim) page by page through raw `pg`.
 */
export const row4 = keysetWalkModule(ROW, 'GET /intel/collections/{collection_id}/objects/changes', (ctx, feed) => {
  const limit = ctx.scale.pageLimit;
  return {
    firstPath: `/intel/collections/${feed.name}/objects/changes?cursor=${feed.startCursor}&limit=${limit}`,
    // Full pages, then one empty page (the only page without a next link, wire-contract §3.2).
    pagesPerWalk: Math.ceil(ctx.scale.feedItems / limit) + 1,
    statement: feedStatement(ctx, feed, 'changesAfter', limit),
    nextPosition: (positions) => (positions.length === 0 ? 0 : positions[positions.length - 1]),
    serviceLabel: 'GET …/objects/changes (limit 1000)',
    baselineLabel: 'raw pg: same keyset SQL',
    walked: `${ctx.scale.feedItems} changes`,
    noun: 'changes',
  };
});
