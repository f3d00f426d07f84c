import type { ObjectKey } from '../common/indicators/indicators.js';
import { failure, keyId, type FormatRecord } from '../formats/forms.js';
import { parseTaxiiEnvelope, taxiiItem, type TaxiiEnvelope } from '../formats/stix.js';
import { RunBytes, type FeedRequest, type FeedResult } from './source-feeds.js';
import { FetchFailure } from './source-fetch.js';

const TAXII_MEDIA_TYPE = 'application/taxii+json;version=2.1';
/** What a page may be served as: TAXII's own media type, or plain JSON as some servers write it. */
const JSON_MEDIA_TYPES = new Set(['application/taxii+json', 'application/json']);

/** A page as fetched: its envelope (or why the answer is not one) and its `X-TAXII-Date-Added-Last`, raw. */
type Page = { httpStatus: number } & ({ ok: true; envelope: TaxiiEnvelope; dateAddedLast: string | null } | { ok: false; record: FormatRecord });

/**
 * A `taxii21` run (extensions §13): `GET {api root}collections/{collectionID}/objects/` with
 * `added_after` = the watermark of the last success, then every page in this same run: by `next` while the
 * server gives one (never kept between runs: servers expire them), else, on a `more: true` without `next`,
 * by `added_after` = the page's `X-TAXII-Date-Added-Last`. A `next` given twice, or a watermark that does
 * not advance, is a server going round in circles: the run fails (`PagingLoop`) and changes nothing. The
 * new watermark is the last non-empty page's `X-TAXII-Date-Added-Last` exactly as written (microseconds
 * and all: re-parsed into a JavaScript date it would lose them, and the next run would fetch the last
 * objects again, forever). No object after the watermark is `notModified`.
 */
export async function readTaxiiCollection(request: FeedRequest): Promise<FeedResult> {
  const { settings } = request;
  const root = settings.url.endsWith('/') ? settings.url : `${settings.url}/`;
  const objectsUrl = new URL(`collections/${encodeURIComponent(settings.collectionID!)}/objects/`, root);
  const bytes = new RunBytes(request.limits.maxBytes);
  const headers = { ...request.headers, accept: TAXII_MEDIA_TYPE };
  const since = request.last?.state?.watermark;

  const fetchPage = async (query: Record<string, string>): Promise<Page> => {
    const url = new URL(objectsUrl);
    if (settings.pageSize !== undefined) url.searchParams.set('limit', String(settings.pageSize));
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const fetched = await request.policy.get({ url: url.href, headers }, request.stop);
    if (fetched.notModified) throw new FetchFailure('HttpStatus', 'the server answered 304 to a request without validators', 304);
    const { httpStatus } = fetched;
    const mediaType = (fetched.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (!JSON_MEDIA_TYPES.has(mediaType)) {
      // Read no further: leaving the loop cancels the response.
      for await (const _chunk of fetched.body) break;
      return {
        httpStatus,
        ok: false,
        record: { kind: 'failed', failure: failure('NotTaxii', `the server answered ${mediaType || 'a body without Content-Type'}, not a TAXII 2.1 envelope`) },
      };
    }
    const text = await bytes.text(fetched.body, fetched.bytes, httpStatus);
    if (!text.ok) return { httpStatus, ok: false, record: { kind: 'failed', failure: text.failure } };
    const parsed = parseTaxiiEnvelope(text.text);
    if (!parsed.ok) return { httpStatus, ok: false, record: { kind: 'failed', failure: parsed.failure } };
    return { httpStatus, ok: true, envelope: parsed.envelope, dateAddedLast: fetched.headers.get('x-taxii-date-added-last') };
  };

  const first = await fetchPage(since !== undefined ? { added_after: since } : {});
  if (first.ok && first.envelope.objects.length === 0 && !first.envelope.more) return { notModified: true, httpStatus: first.httpStatus };

  const end = { withdrawn: [] as ObjectKey[], state: since !== undefined ? { watermark: since } : {} };
  const context = settings.context;
  async function* records(): AsyncGenerator<FormatRecord> {
    const seen = new Set<string>();
    const ended = new Map<string, ObjectKey>();
    const nexts = new Set<string>();
    let index = 0;
    let after = since;
    for (let page = first; ;) {
      if (!page.ok) {
        yield page.record;
        return;
      }
      const now = new Date();
      for (const object of page.envelope.objects) {
        const item = taxiiItem(object, context, now);
        if (item.kind === 'skipped') continue;
        // The run's n-th item, as a line is a list's.
        index += 1;
        if (item.kind === 'form') {
          for (const key of item.form.keys) seen.add(keyId(key));
          yield {
            kind: 'form',
            line: index,
            form: item.form,
            ...(item.tlp !== undefined && { tlp: item.tlp }),
            ...(item.credibility !== undefined && { credibility: item.credibility }),
          };
        } else if (item.kind === 'refused') {
          yield { kind: 'rejected', rejection: { line: index, value: item.id, reason: item.reason } };
        } else {
          for (const key of item.keys) ended.set(keyId(key), key);
        }
      }
      if (page.envelope.objects.length > 0 && page.dateAddedLast !== null) end.state = { watermark: page.dateAddedLast };
      if (!page.envelope.more) break;
      const { next } = page.envelope;
      if (next !== undefined) {
        if (nexts.has(next)) throw new FetchFailure('PagingLoop', 'the server gave the same next twice in one run: it pages in a circle', page.httpStatus);
        nexts.add(next);
        // With the request's other parameters, as TAXII asks (this service's `next` would do alone).
        page = await fetchPage({ ...(after !== undefined && { added_after: after }), next });
      } else {
        // `more` without `next`: the server pages by time only.
        if (page.dateAddedLast === null || page.dateAddedLast === after) {
          throw new FetchFailure(
            'PagingLoop',
            'the server answered more: true without next, and its X-TAXII-Date-Added-Last does not advance',
            page.httpStatus,
          );
        }
        after = page.dateAddedLast;
        page = await fetchPage({ added_after: after });
      }
    }
    // A key an indicator of this run still stands for keeps its claim, whatever another one revoked.
    end.withdrawn = [...ended].filter(([id]) => !seen.has(id)).map(([, key]) => key);
  }
  return { notModified: false, httpStatus: first.httpStatus, etag: null, lastModified: null, records: records(), bytes: () => bytes.count, end };
}
