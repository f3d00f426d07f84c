import { keysetWalkModule } from './feed-setup.js';
import { SERVICE_SETTINGS } from './service-statements.js';

const ROW = { id: '15', title: 'TAXII objects page of the seeded objects, limit 1000', unit: 'pages/s', target: { minRatio: 0.3 } };
const TAXII = 'application/taxii+json;version=2.1';
/** `next` comes first in the envelope; the page's body is read only for it. */
const NEXT = /"next":"([A-Za-z0-9_-]+)"/;

/**
 * Row 15: `scale.readers` concurrent TAXII clients each read the seeded collection (row 4/5's 100k objects)
 * as STIX 2.1 with `limit` 1000 (an indicator and its observable per object: 500 objects a page), following
 * `next` only, to the last page (`more: false`). Baseline: the same readers running the statement the service
 * runs for a page (ObjectVersionsService's statement with the default `match[version]=last`: 501 feed
 * positions) through raw `pg`, continuing after the 500th position.
 */
export const row15 = keysetWalkModule(ROW, 'GET /taxii2/api/collections/{collection_id}/objects', async (ctx, feed) => {
  const { scale } = ctx;
  const limit = scale.pageLimit;
  const [{ taxii_id: taxiiId }] = (await ctx.setupPool.query(`SELECT taxii_id FROM intel_collection WHERE id = $1`, [feed.collectionId])).rows as {
    taxii_id: string;
  }[];
  const objectsPath = `/taxii2/api/collections/${taxiiId}/objects/`;
  // As the service reads a page: about limit / 2 + 1 positions, the page ending after limit / 2 of them.
  const rowsPerPage = Math.ceil(limit / 2) + 1;
  return {
    firstPath: `${objectsPath}?limit=${limit}`,
    nextPath: (body) => {
      const next = NEXT.exec(body.slice(0, 4096))?.[1];
      return next === undefined ? undefined : `${objectsPath}?next=${next}`;
    },
    headers: { Accept: TAXII },
    // The service's identity and extension definition, then two objects per seeded object.
    pagesPerWalk: Math.ceil((2 + 2 * scale.feedItems) / limit),
    // TAXII's default query (match[version]=last, no other filter), built by the service's own builder.
    statement: (after) =>
      ctx.statements.versions.versionsStatement(
        feed.collectionId,
        { afterSeq: after, versions: { first: false, last: true, at: [] }, limit: rowsPerPage },
        SERVICE_SETTINGS.pageMaxBytes,
      ),
    nextPosition: (positions) => (positions.length === rowsPerPage ? positions[rowsPerPage - 2] : 0),
    serviceLabel: `GET …/taxii2/…/objects/ (limit ${limit})`,
    baselineLabel: 'raw pg: same versions SQL',
    walked: `${scale.feedItems} objects as ${2 * scale.feedItems + 2} STIX objects`,
    noun: 'STIX objects',
  };
});
