import { describe, expect, it } from '@jest/globals';
import { endsWithThisMiss, isSuspect, missesToEnd, tooFewItems, type Removal } from './removal.js';

describe('what a run does to a claim it does not see again', () => {
  // [policy, misses before this run, ends with this miss]
  const table: [Removal, number, boolean][] = [
    [{ policy: 'remove' }, 0, true],
    [{ policy: 'remove' }, 3, true],
    [{ policy: 'afterMissedRuns', runs: 1 }, 0, true],
    [{ policy: 'afterMissedRuns', runs: 2 }, 0, false],
    [{ policy: 'afterMissedRuns', runs: 2 }, 1, true],
    [{ policy: 'afterMissedRuns', runs: 3 }, 1, false],
    [{ policy: 'afterMissedRuns', runs: 3 }, 2, true],
    // Raised meanwhile (a PATCH): a claim missed more often than the new grace ends at its next miss.
    [{ policy: 'afterMissedRuns', runs: 2 }, 5, true],
    [{ policy: 'never' }, 0, false],
    [{ policy: 'never' }, 1000, false],
  ];

  it.each(table)('%j, missed %i times before: ends %s', (removal, missedBefore, ends) => {
    expect(endsWithThisMiss(removal, missedBefore)).toBe(ends);
  });

  it('the threshold the settlement binds: misses (this one included) to end a claim, null for never', () => {
    expect(missesToEnd({ policy: 'remove' })).toBe(1);
    expect(missesToEnd({ policy: 'afterMissedRuns', runs: 4 })).toBe(4);
    expect(missesToEnd({ policy: 'never' })).toBeNull();
  });
});

describe('when the removals of a run are suspect (none ends)', () => {
  // [case, held before, ending, maxRemovalRatio, too few items, suspect]
  const table: [string, number, number, number, boolean, boolean][] = [
    ['nothing ends', 100, 0, 0.5, false, false],
    ['just at the ratio', 100, 50, 0.5, false, false],
    ['above the ratio', 100, 51, 0.5, false, true],
    ['every claim, ratio 1', 100, 100, 1, false, false],
    ['any removal, ratio 0', 100, 1, 0, false, true],
    ['the first run holds nothing before it and ends nothing', 0, 0, 0.5, false, false],
    ['too few items, whatever the removals', 100, 0, 1, true, true],
  ];

  it.each(table)('%s', (_case, held, ending, maxRemovalRatio, tooFew, suspect) => {
    expect(isSuspect({ held, ending, maxRemovalRatio, tooFew })).toBe(suspect);
  });

  // [case, forms (null: no body), withdrawn, minItems, too few]
  const short: [string, number | null, number, number, boolean][] = [
    ['a 304 is the previous body', null, 0, 10, false],
    ['fewer forms than minItems', 9, 0, 10, true],
    ['as many as minItems', 10, 0, 10, false],
    ["a feed kind's withdrawals count as items", 9, 1, 10, false],
    ['an empty body, minItems 0', 0, 0, 0, false],
  ];

  it.each(short)('items: %s', (_case, forms, withdrawn, minItems, tooFew) => {
    expect(tooFewItems(forms, withdrawn, minItems)).toBe(tooFew);
  });
});
