import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { AccessRequest } from '../common/guard/access.js';
import { requestIdOf } from '../common/logging/request-logging.js';
import { DEFAULT_RELIABILITY, reliabilityRank } from '../scoring/admiralty.js';

/** How a change was made (extensions §14): the endpoint family, a source run, the expiry job, or an extension. */
export const WRITE_VIAS = ['api', 'batch', 'import', 'taxii', 'console', 'source', 'expiry', 'extension'] as const;
export type WriteVia = (typeof WRITE_VIAS)[number];

/**
 * Who made a write and how, stored with each of its change records (extensions §14). The first parameter
 * of every intel write entry point, as immich passes `AuthDto` and twenty-server its `ActorMetadata`.
 */
export interface WriteOrigin {
  readonly via: WriteVia;
  /** The key whose request made it; null for the service's own jobs and for extensions. */
  readonly keyID: number | null;
  /** The request's `X-Request-Id` (as answered and audited), or a job run's id. */
  readonly requestID: string | null;
  /** The source's name when `via` is `source`, else null. */
  readonly source: string | null;
  /**
   * The reliability (a rank, src/scoring/admiralty.ts's reliabilityRank) the write gives the api claim it makes
   * (extensions §18): its key's; null for the writes that make none (a source's, a job's).
   */
  readonly reliability: number | null;
}

/** The reliability of a native write without a key of its own (an extension's): F, every key's default. */
const KEYLESS_RELIABILITY = reliabilityRank(DEFAULT_RELIABILITY);

/** The ways a routed request writes (a source run or a job is not a request): the native writes. */
export const NATIVE_VIAS = ['api', 'batch', 'import', 'taxii', 'console'] as const;

export type RequestVia = (typeof NATIVE_VIAS)[number];

/** The origin of a write made by this request: its principal's key and its request id (requestLogging). */
export function requestOrigin(request: AccessRequest, via: RequestVia): WriteOrigin {
  const principal = request.principal;
  return {
    via,
    keyID: principal?.keyId ?? null,
    requestID: requestIdOf(request) ?? null,
    source: null,
    reliability: principal?.reliability ?? KEYLESS_RELIABILITY,
  };
}

/** `@Origin('batch') origin: WriteOrigin`: the origin of the request's writes (requestOrigin). */
export const Origin = createParamDecorator((via: RequestVia, context: ExecutionContext): WriteOrigin =>
  requestOrigin(context.switchToHttp().getRequest<AccessRequest>(), via),
);

/** The origin of the writes of one run of a service job (no key; the run's id as the request id). */
export function jobOrigin(via: 'expiry', runID: string): WriteOrigin {
  return { via, keyID: null, requestID: runID, source: null, reliability: null };
}

/**
 * The origin of the writes of a source (extensions §13): a run's (its id; the key of a manual run, else none),
 * or the withdrawals of its deletion (the request's id and key).
 */
export function sourceOrigin(source: string, requestID: string | null, keyID: number | null): WriteOrigin {
  return { via: 'source', keyID, requestID, source, reliability: null };
}

/** The origin of writes made by an extension module through ObjectsService's extension overloads. */
export const EXTENSION_ORIGIN: WriteOrigin = { via: 'extension', keyID: null, requestID: null, source: null, reliability: KEYLESS_RELIABILITY };
