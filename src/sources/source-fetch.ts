import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector, fetch, type Dispatcher } from 'undici';
import { networkSet } from '../common/http/client-address.js';
import type { SourcesConfig } from '../config/app-config.js';

/** Why a fetch failed: the run's `error.code` (extensions §13 "Failures"). */
export type FetchFailureCode =
  | 'AddressRefused'
  | 'ConnectionFailed'
  | 'Timeout'
  | 'HttpStatus'
  | 'TooLarge'
  | 'TooManyRedirects'
  | 'BadRedirect'
  | 'TruncatedBody'
  | 'PagingLoop'
  | 'Interrupted';

export class FetchFailure extends Error {
  constructor(
    readonly code: FetchFailureCode,
    message: string,
    readonly httpStatus: number | null = null,
    /** From `Retry-After` of a 429 or 503: the earliest next attempt, in seconds from now. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** What to fetch: the URL, the request headers of the source (secrets included), the stored validators. */
export interface FetchRequest {
  url: string;
  headers: Record<string, string>;
  etag?: string | null;
  lastModified?: string | null;
}

export type FetchResult =
  | { notModified: true; httpStatus: 304 }
  | {
      notModified: false;
      httpStatus: number;
      etag: string | null;
      lastModified: string | null;
      /** The response's headers, for the kinds that read more of them (`Content-Type`, TAXII's). */
      headers: Headers;
      body: AsyncIterable<Uint8Array>;
      bytes: () => number;
    };

const MAX_REDIRECTS = 5;

/** The longest wait a `Retry-After` may impose: the back-off's cap (extensions §13, 24 h). */
const MAX_RETRY_AFTER_SECONDS = 86_400;

/**
 * Seconds of a `Retry-After` (delay-seconds or an HTTP date), at most 24 h, null when absent or
 * unreadable. Capped here: a server's `Retry-After: 99999999999999999999` would otherwise overflow the
 * next run's time in PostgreSQL and leave the run's row open.
 */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  const at = Date.parse(trimmed);
  const seconds = /^\d+$/.test(trimmed) ? Number(trimmed) : Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
  return seconds === null ? null : Math.min(seconds, MAX_RETRY_AFTER_SECONDS);
}

/** The family BlockList takes for an address literal. */
const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/**
 * The outbound address policy (SOURCE_DENY_NETWORKS), applied where the connection is made: every
 * connection of the agent (the first request and each redirect) resolves its host through `lookup` below
 * and refuses when any address it resolves to is denied, so a name that resolves to a metadata address is
 * refused whatever URL led to it, and no byte is sent to it. Literal addresses skip the resolver in
 * net.connect, so the connector checks them itself first.
 */
export class OutboundPolicy {
  private readonly deny: BlockList;
  readonly dispatcher: Dispatcher;

  constructor(private readonly settings: SourcesConfig) {
    this.deny = networkSet(settings.denyNetworks);
    const lookup = (hostname: string, options: { all?: boolean; family?: number }, callback: (...args: unknown[]) => void) => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error);
        const refused = addresses.find((entry) => this.denied(entry.address));
        if (refused !== undefined) return callback(refusal(hostname, refused.address));
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      });
    };
    const connect = buildConnector({ lookup } as buildConnector.BuildOptions);
    this.dispatcher = new Agent({
      connect: (options, callback) => {
        const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
        if (isIP(host) !== 0 && this.denied(host)) return callback(refusal(host, host), null);
        connect(options, callback);
      },
    });
  }

  /** Whether SOURCE_DENY_NETWORKS refuses this address (IPv4-mapped IPv6 addresses as their IPv4). */
  denied(address: string): boolean {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const plain = mapped ? mapped[1] : address;
    return isIP(plain) !== 0 && this.deny.check(plain, familyOf(plain));
  }

  /**
   * GETs the URL, following at most 5 redirects (each an http(s) URL without credentials, checked again by
   * the policy when it connects), with the stored validators; the body is decoded (gzip, deflate) and
   * counted as it is read, failing past SOURCE_MAX_BYTES or past SOURCE_TIMEOUT_SECONDS from the start.
   * Headers of the source (its secrets) go to its own origin only, never to another one a redirect names.
   * `stop` (the instance shutting down) ends it at once as `Interrupted`.
   */
  async get(request: FetchRequest, stop: AbortSignal): Promise<FetchResult> {
    const signal = AbortSignal.any([AbortSignal.timeout(this.settings.timeoutSeconds * 1000), stop]);
    const origin = new URL(request.url).origin;
    let url = request.url;
    for (let redirects = 0; ; redirects++) {
      const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate', ...(new URL(url).origin === origin ? request.headers : {}) };
      if (request.etag) headers['if-none-match'] = request.etag;
      if (request.lastModified) headers['if-modified-since'] = request.lastModified;
      let response: Awaited<ReturnType<typeof fetch>>;
      try {
        response = await fetch(url, { headers, redirect: 'manual', signal, dispatcher: this.dispatcher });
      } catch (error) {
        throw failureOf(error, signal, stop);
      }
      if (response.status >= 300 && response.status < 400 && response.status !== 304) {
        await response.body?.cancel().catch(() => undefined);
        if (redirects === MAX_REDIRECTS) throw new FetchFailure('TooManyRedirects', `more than ${MAX_REDIRECTS} redirects`, response.status);
        url = this.redirectTarget(url, response.headers.get('location'), response.status);
        continue;
      }
      if (response.status === 304) {
        await response.body?.cancel().catch(() => undefined);
        return { notModified: true, httpStatus: 304 };
      }
      if (response.status >= 400 || response.body === null) {
        await response.body?.cancel().catch(() => undefined);
        const retry = response.status === 429 || response.status === 503 ? retryAfterSeconds(response.headers.get('retry-after')) : null;
        throw new FetchFailure('HttpStatus', `the server answered ${response.status}`, response.status, retry);
      }
      let bytes = 0;
      const max = this.settings.maxBytes;
      const stream = response.body;
      const body = (async function* counted() {
        try {
          for await (const chunk of stream) {
            bytes += chunk.byteLength;
            if (bytes > max) throw new FetchFailure('TooLarge', `the body is larger than SOURCE_MAX_BYTES (${max})`, response.status);
            yield chunk;
          }
        } catch (error) {
          if (error instanceof FetchFailure) throw error;
          throw failureOf(error, signal, stop, response.status);
        } finally {
          await stream.cancel().catch(() => undefined);
        }
      })();
      return {
        notModified: false,
        httpStatus: response.status,
        etag: response.headers.get('etag'),
        lastModified: response.headers.get('last-modified'),
        headers: response.headers,
        body,
        bytes: () => bytes,
      };
    }
  }

  private redirectTarget(from: string, location: string | null, status: number): string {
    if (location === null) throw new FetchFailure('BadRedirect', `a ${status} without Location`, status);
    let target: URL;
    try {
      target = new URL(location, from);
    } catch {
      throw new FetchFailure('BadRedirect', 'a redirect to an unreadable Location', status);
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new FetchFailure('BadRedirect', `a redirect to a ${target.protocol} URL`, status);
    if (target.username !== '' || target.password !== '') throw new FetchFailure('BadRedirect', 'a redirect to a URL with credentials', status);
    return target.href;
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

function refusal(host: string, address: string): FetchFailure {
  return new FetchFailure('AddressRefused', `${host} resolves to ${address}, an address SOURCE_DENY_NETWORKS refuses`);
}

/** A fetch or body error as a FetchFailure: the policy's refusal, the deadline, or a broken connection. */
function failureOf(error: unknown, signal: AbortSignal, stop: AbortSignal, httpStatus: number | null = null): FetchFailure {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof FetchFailure) return cause;
  }
  if (stop.aborted) return new FetchFailure('Interrupted', 'the instance running it shut down; the run is due again at once', httpStatus);
  if (signal.aborted) return new FetchFailure('Timeout', 'the fetch took longer than SOURCE_TIMEOUT_SECONDS', httpStatus);
  const message = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
  if (httpStatus !== null) return new FetchFailure('TruncatedBody', `the body ended early or could not be decoded: ${message}`, httpStatus);
  return new FetchFailure('ConnectionFailed', `the connection failed: ${message}`);
}
