import { describe, expect, it } from '@jest/globals';
import { heartbeatRefusal, reportRefusal, type ReportRefusal, type ReportStanding } from './report-refusal.js';

const DIGEST = 'aa';
const OTHER = 'bb';

/** A task open for a report whose current attempt made none; `changed` says otherwise. */
function standing(changed: Partial<ReportStanding> = {}): ReportStanding {
  return { open: true, current: true, currentReport: null, earlier: false, earlierReport: null, ...changed };
}

describe('reportRefusal: why a fenced completion or failure changed nothing', () => {
  const table: [string, ReportStanding | undefined, boolean, ReportRefusal][] = [
    // [case, standing, withToken, refusal]
    ['no such task, with a token', undefined, true, 'taskNotFound'],
    ['no such task, without a token', undefined, false, 'taskNotFound'],
    ['no token, task open: another key holds the live lease', standing({ current: null }), false, 'leasedByAnotherKey'],
    ['no token, task takes no report', standing({ open: false, current: null }), false, 'invalidState'],
    ['no token, task takes no report though it has an accepted report', standing({ open: false, current: null, currentReport: DIGEST }), false, 'invalidState'],
    ['current token, this very report accepted: a replay', standing({ open: false, currentReport: DIGEST }), true, 'replay'],
    ['current token, another report accepted', standing({ open: false, currentReport: OTHER }), true, 'otherReport'],
    ['current token, no report, task ended (cancelled or last lease out)', standing({ open: false }), true, 'invalidState'],
    ['current token, no report, task open (the fence refused nothing else)', standing(), true, 'invalidState'],
    ['earlier token, this very report accepted then: a replay', standing({ current: false, earlier: true, earlierReport: DIGEST }), true, 'replay'],
    ['earlier token, another report accepted then', standing({ current: false, earlier: true, earlierReport: OTHER }), true, 'otherReport'],
    ['earlier token whose attempt reported nothing (its lease ran out)', standing({ current: false, earlier: true }), true, 'leaseLost'],
    ['a token the task never had', standing({ current: false }), true, 'leaseLost'],
    ['a token the task never had, task ended', standing({ open: false, current: false }), true, 'leaseLost'],
    [
      "an earlier token is judged by the earlier attempt's report, not the current one's",
      standing({ current: false, currentReport: DIGEST }),
      true,
      'leaseLost',
    ],
    ["the current token is judged by the current attempt's report, not an earlier one's", standing({ earlierReport: DIGEST }), true, 'invalidState'],
  ];

  it.each(table)('%s', (_, row, withToken, expected) => {
    expect(reportRefusal(row, { withToken, digest: DIGEST })).toBe(expected);
  });
});

describe('heartbeatRefusal: why a heartbeat was not accepted', () => {
  const table: [string, ReportStanding | undefined, 'invalidState' | 'leaseLost'][] = [
    ['the current token on a task that takes no report', standing({ open: false }), 'invalidState'],
    ['the current token even when its attempt reported (a heartbeat is no replay)', standing({ open: false, currentReport: DIGEST }), 'invalidState'],
    ["an earlier attempt's token", standing({ current: false, earlier: true }), 'leaseLost'],
    ['a token the task never had', standing({ current: false }), 'leaseLost'],
    ['the task went away between the heartbeat and the look at it', undefined, 'leaseLost'],
  ];

  it.each(table)('%s', (_, row, expected) => {
    expect(heartbeatRefusal(row)).toBe(expected);
  });
});
