import type { ObjectKey } from '../common/indicators/indicators.js';
import type { TlpRank } from '../common/markings/tlp.js';
import type { SourcesConfig } from '../config/app-config.js';
import { NotUtf8, textOf } from '../formats/chunks.js';
import { failure, type FormatFailure, type FormatRecord } from '../formats/forms.js';
import { FetchFailure, type OutboundPolicy } from './source-fetch.js';
import type { SourceSettings } from './source-form.js';

/**
 * What the feed kinds (`feed-kinds.ts`) share: a feed kind reads by many requests and keeps a state
 * between runs; it gives its objects as the line kinds do (`FormatRecord`s, read as the pages arrive),
 * plus the keys whose claims end and the state the run stores with its success.
 */

/** What a feed kind keeps between successful runs (`sources_source.feed_state`). */
export interface FeedState {
  /** `taxii21`: the last `X-TAXII-Date-Added-Last`, exactly as the server wrote it. */
  watermark?: string;
  /**
   * `misp`: per event of the manifest, its timestamp, the keys its attributes gave (`type\nvalue`), and the
   * markings its `tlp:` tags gave them, by key, when above TLP:CLEAR (absent: none).
   */
  events?: Record<string, { timestamp: string; keys: string[]; marks?: Record<string, TlpRank> }>;
}

/** Known once the records are drained: the keys whose claims end, and the state to store. */
export interface FeedEnd {
  withdrawn: ObjectKey[];
  state: FeedState;
}

export type FeedResult =
  /** Nothing new upstream (a 304 of the manifest, no object after the watermark): the previous body again. */
  | { notModified: true; httpStatus: number }
  | {
      notModified: false;
      httpStatus: number;
      etag: string | null;
      lastModified: string | null;
      records: AsyncGenerator<FormatRecord>;
      bytes: () => number;
      end: FeedEnd;
    };

/** What a feed reader is given: the policy (every request through it), the source, and whether it is a dry run. */
export interface FeedRequest {
  policy: OutboundPolicy;
  limits: SourcesConfig;
  settings: SourceSettings;
  headers: Record<string, string>;
  /** Validators and state of the last success; null for a dry run (a fresh read, as the line kinds do). */
  last: { etag: string | null; lastModified: string | null; state: FeedState | null } | null;
  stop: AbortSignal;
}

/**
 * Bodies of one run, read whole each (a page, an event file) and counted together: past SOURCE_MAX_BYTES
 * in all, the run fails as one body over it would.
 */
export class RunBytes {
  private total = 0;

  constructor(private readonly max: number) {}

  /** The body as text, or its failure (not UTF-8). */
  async text(
    body: AsyncIterable<Uint8Array>,
    bytes: () => number,
    httpStatus: number,
  ): Promise<{ ok: true; text: string } | { ok: false; failure: FormatFailure }> {
    const parts: string[] = [];
    const before = this.total;
    try {
      for await (const part of textOf(body)) {
        parts.push(part);
        this.total = before + bytes();
        if (this.total > this.max) throw new FetchFailure('TooLarge', `the run's bodies are larger than SOURCE_MAX_BYTES (${this.max}) together`, httpStatus);
      }
    } catch (error) {
      if (error instanceof NotUtf8) return { ok: false, failure: failure('NotUtf8', error.message) };
      throw error;
    }
    this.total = before + bytes();
    return { ok: true, text: parts.join('') };
  }

  get count(): number {
    return this.total;
  }
}
