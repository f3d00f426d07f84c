import type { StagedRun } from '../intel/batch/batch.service.js';
import { LeaseLost, RunFailure } from './run-failures.js';
import type { FeedState } from './source-feeds.js';
import { FetchFailure } from './source-fetch.js';
import type { RunValidators } from './source-runs.repository.js';

/**
 * The rules that turn what a run found into its outcome (extensions §13 "Runs", "Conditional GET",
 * "Failures"), pure: SourceRunsService fetches, stages and settles, these say what that amounts to.
 */
export type Outcome = 'ok' | 'notModified' | 'unchanged' | 'suspect' | 'failed';

/** The staged body (null: none, a 304), as BatchService gives it to the settlement. */
export type StagedBody = StagedRun['body'];

/** What a run's settlement decided inside its transaction: the body it settled and whether it was suspect. */
export interface Settlement {
  body: StagedBody;
  suspect: boolean;
}

/**
 * A body that repeats the previous one: a 304 (no body) or the same normalised objects as the last success.
 * It writes nothing but the withdrawals of graces ending, so its claims are settled as misses only.
 */
export function isRepeat(body: StagedBody): boolean {
  return body === null || body.repeat;
}

/** The outcome of a run that settled: suspect above all, then a 304, a repeat, or a new body. */
export function settledOutcome(settlement: Settlement): Exclude<Outcome, 'failed'> {
  if (settlement.suspect) return 'suspect';
  if (settlement.body === null) return 'notModified';
  return settlement.body.repeat ? 'unchanged' : 'ok';
}

/** The run's `unchanged` count: a repeat skips writing, so each of its forms is unchanged; otherwise what the write found. */
export function unchangedCount(settlement: Settlement, written: { unchanged: number }): number {
  return settlement.body !== null && settlement.body.repeat ? settlement.body.forms : written.unchanged;
}

/** What a fetch gives the close: whether it was a 304, and the validators of the answer. */
export type Fetched = { notModified: true } | { notModified: false; etag: string | null; lastModified: string | null };

/**
 * What the close of a settled run writes on the source, as the last statement of its transaction: a suspect
 * run clears the validators (the next run weighs the whole body again); a success keeps new validators, the
 * body's digest and a feed kind's state (`feedState`, null for the line kinds), or, for a 304, none (null:
 * those stored stay).
 */
export type Closing = { suspect: true } | { suspect: false; validators: RunValidators | null };

export function closingOf(settlement: Settlement, fetched: Fetched, feedState: FeedState | null): Closing {
  if (settlement.suspect) return { suspect: true };
  if (fetched.notModified || settlement.body === null) return { suspect: false, validators: null };
  return {
    suspect: false,
    validators: { etag: fetched.etag, lastModified: fetched.lastModified, bodyDigest: settlement.body.digest, ...(feedState !== null && { feedState }) },
  };
}

/** A failed run's part of its log row: its error, and what the fetch said of the status and the next attempt. */
export interface Failure {
  error: { code: string; message: string };
  httpStatus: number | null;
  retryAfterSeconds: number | null;
}

/**
 * The failure a thrown error is for a run (outcome `failed`, nothing written), or undefined for an error no
 * run expects (a bug: thrown on, logged by the run). `httpStatus` is the fetch's when the failure has none.
 */
export function failureOf(error: unknown, httpStatus: number | null): Failure | undefined {
  if (error instanceof FetchFailure) {
    return { error: { code: error.code, message: error.message }, httpStatus: error.httpStatus ?? httpStatus, retryAfterSeconds: error.retryAfterSeconds };
  }
  if (error instanceof RunFailure) return { error: { code: error.code, message: error.message }, httpStatus, retryAfterSeconds: null };
  if (error instanceof LeaseLost) return { error: { code: 'LeaseLost', message: error.message }, httpStatus, retryAfterSeconds: null };
  return undefined;
}
