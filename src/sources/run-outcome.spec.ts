import { describe, expect, it } from '@jest/globals';
import { LeaseLost, RunFailure } from './run-failures.js';
import { closingOf, failureOf, isRepeat, settledOutcome, unchangedCount, type Fetched, type Outcome, type Settlement, type StagedBody } from './run-outcome.js';
import { FetchFailure } from './source-fetch.js';

const body = (repeat: boolean, forms = 3): StagedBody => ({ digest: 'd1', forms, repeat });
const fetched200: Fetched = { notModified: false, etag: '"v2"', lastModified: 'Sun, 29 Nov 2026 00:00:00 GMT' };
const fetched304: Fetched = { notModified: true };

describe('a run that settled', () => {
  // [case, settlement, outcome, unchanged (the write found 1), repeat]
  const table: [string, Settlement, Outcome, number, boolean][] = [
    ['a new body', { body: body(false), suspect: false }, 'ok', 1, false],
    ['the same normalised objects again', { body: body(true), suspect: false }, 'unchanged', 3, true],
    ['a 304 (no body)', { body: null, suspect: false }, 'notModified', 1, true],
    ['a new body ending too many claims', { body: body(false), suspect: true }, 'suspect', 1, false],
    ['a repeat whose graces would end too many claims', { body: body(true), suspect: true }, 'suspect', 3, true],
    ['a 304 whose graces would end too many claims', { body: null, suspect: true }, 'suspect', 1, true],
  ];

  it.each(table)('%s', (_case, settlement, outcome, unchanged, repeat) => {
    expect(settledOutcome(settlement)).toBe(outcome);
    expect(unchangedCount(settlement, { unchanged: 1 })).toBe(unchanged);
    expect(isRepeat(settlement.body)).toBe(repeat);
  });
});

describe('what the close of a run writes on the source', () => {
  const state = { watermark: 'w1' } as never;
  // [case, settlement, fetched, feed state, closing]
  const table: [string, Settlement, Fetched, unknown, ReturnType<typeof closingOf>][] = [
    [
      'a new body keeps its validators and digest',
      { body: body(false), suspect: false },
      fetched200,
      null,
      { suspect: false, validators: { etag: '"v2"', lastModified: 'Sun, 29 Nov 2026 00:00:00 GMT', bodyDigest: 'd1' } },
    ],
    [
      'a repeat keeps them too (the validators may be new)',
      { body: body(true), suspect: false },
      fetched200,
      null,
      {
        suspect: false,
        validators: { etag: '"v2"', lastModified: 'Sun, 29 Nov 2026 00:00:00 GMT', bodyDigest: 'd1' },
      },
    ],
    [
      "a feed kind's body keeps its state as well",
      { body: body(false), suspect: false },
      fetched200,
      state,
      { suspect: false, validators: { etag: '"v2"', lastModified: 'Sun, 29 Nov 2026 00:00:00 GMT', bodyDigest: 'd1', feedState: state } },
    ],
    ['a 304 keeps what is stored', { body: null, suspect: false }, fetched304, null, { suspect: false, validators: null }],
    ['a suspect run clears them, whatever it fetched', { body: body(false), suspect: true }, fetched200, state, { suspect: true }],
    ['a suspect 304 clears them', { body: null, suspect: true }, fetched304, null, { suspect: true }],
  ];

  it.each(table)('%s', (_case, settlement, fetched, feedState, closing) => {
    expect(closingOf(settlement, fetched, feedState as never)).toEqual(closing);
  });
});

describe('the failure an error is for a run', () => {
  // [case, error, httpStatus of the fetch, failure]
  const table: [string, unknown, number | null, ReturnType<typeof failureOf>][] = [
    [
      'a failed fetch: its own status and Retry-After',
      new FetchFailure('HttpStatus', 'status 503', 503, 120),
      null,
      { error: { code: 'HttpStatus', message: 'status 503' }, httpStatus: 503, retryAfterSeconds: 120 },
    ],
    [
      "a failed fetch without a status keeps the fetch's",
      new FetchFailure('TooLarge', 'over the limit'),
      200,
      { error: { code: 'TooLarge', message: 'over the limit' }, httpStatus: 200, retryAfterSeconds: null },
    ],
    [
      'a body that is not what its kind says',
      new RunFailure('HtmlPage', 'an HTML page'),
      200,
      { error: { code: 'HtmlPage', message: 'an HTML page' }, httpStatus: 200, retryAfterSeconds: null },
    ],
    [
      'a lease taken over',
      new LeaseLost(),
      200,
      { error: { code: 'LeaseLost', message: 'the run lost its lease to another instance' }, httpStatus: 200, retryAfterSeconds: null },
    ],
    ['an error no run expects is none (thrown on)', new TypeError('a bug'), 200, undefined],
  ];

  it.each(table)('%s', (_case, error, httpStatus, failure) => {
    expect(failureOf(error, httpStatus)).toEqual(failure);
  });
});
