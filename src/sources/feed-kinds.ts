import { readMispFeed } from './misp-feed.js';
import type { FeedRequest, FeedResult } from './source-feeds.js';
import type { SourceKind } from './source-form.js';
import { readTaxiiCollection } from './taxii-client.js';

/**
 * The kinds that read a feed by many requests and keep a state between runs (extensions §13): `taxii21`
 * (every page of a collection, then the raw `X-TAXII-Date-Added-Last` as the next `added_after`) and
 * `misp` (the manifest, then the event files whose timestamp moved). The line kinds are `source-records.ts`.
 */
export const FEED_KINDS: ReadonlySet<SourceKind> = new Set(['taxii21', 'misp']);

export function readFeed(kind: SourceKind, request: FeedRequest): Promise<FeedResult> {
  return kind === 'taxii21' ? readTaxiiCollection(request) : readMispFeed(request);
}
