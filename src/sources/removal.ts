import type { SourceSettings } from './source-form.js';

/**
 * The removal judgement of a run (extensions §13 "Runs"), pure: what a run does to the claims it did not
 * see again, by the source's removal policy, and when the removals it would make are suspect. The claim
 * settlement (ClaimSettlementRepository) applies the same rules in SQL, over the threshold below, bound as
 * a parameter: the policy is never written into the statement's text.
 */
export type Removal = SourceSettings['removal'];

/**
 * After how many missed runs in a row (this one included) a claim ends: `remove` at the first, `afterMissedRuns`
 * after `runs`, `never` never (null).
 */
export function missesToEnd(removal: Removal): number | null {
  switch (removal.policy) {
    case 'remove':
      return 1;
    case 'afterMissedRuns':
      // The form requires `runs` with this policy; without it a claim would end at its first miss, as `remove`.
      return removal.runs ?? 1;
    case 'never':
      return null;
  }
}

/** Whether a claim already missed by `missedBefore` runs in a row ends when this run misses it too. */
export function endsWithThisMiss(removal: Removal, missedBefore: number): boolean {
  const threshold = missesToEnd(removal);
  return threshold !== null && missedBefore + 1 >= threshold;
}

/** What the settlement counted before it ends anything. */
export interface RemovalCount {
  /** Claims the source held before this run (those it just made do not dilute its removals). */
  held: number;
  /** Claims this run would end. */
  ending: number;
  maxRemovalRatio: number;
  /** Fewer items than the source's minItems. */
  tooFew: boolean;
}

/**
 * A run is suspect when its body has fewer items than minItems, or when it would end more than
 * maxRemovalRatio of the claims held before it: then it ends none (its additions are still written).
 */
export function isSuspect(count: RemovalCount): boolean {
  return count.tooFew || count.ending > count.maxRemovalRatio * count.held;
}

/**
 * Whether a body is too short to be trusted (minItems): its forms and a feed kind's own withdrawals. No body
 * (a 304, `forms` null) is never too short: it is the previous body again.
 */
export function tooFewItems(forms: number | null, withdrawn: number, minItems: number): boolean {
  return forms !== null && forms + withdrawn < minItems;
}
