/**
 * The score of extensions §18 as a TypeScript function, the twin of the SQL function `intel_score`
 * (src/database/migrations/1796100000000-Scoring.ts), which every filter runs: the same operations in the same
 * order, so both round alike (test/scoring/score-agreement checks thousands of random inputs). Readers show
 * the SQL's score; this one explains it (src/scoring/explanation.ts), and finds when it falls below a bound.
 */

/** A live claim's Admiralty values as numbers (0..100, src/scoring/admiralty.ts). */
export interface ClaimStrength {
  reliability: number;
  credibility: number;
}

export interface Decay {
  lifetimeDays: number;
  speed: number;
}

export interface Override {
  score: number;
  /** Null: until deleted or the object's life ends. */
  until: Date | null;
}

export interface ScoreInputs {
  claims: readonly ClaimStrength[];
  sightings: { count: number; falsePositives: number };
  /** The latest of the claims' lastSeenAt and the last sighting. */
  anchorAt: Date;
  /** Null: the object's type never decays in its collection. */
  decay: Decay | null;
  override: Override | null;
}

export interface ScoreParts {
  score: number;
  base: number;
  fp: number;
  decay: number;
}

const DAY_MS = 86_400_000;

export const strengthOf = (claim: ClaimStrength): number => (claim.reliability + claim.credibility) / 2;

/** Π(1 − strength/100) over the claims, multiplied in ascending order of the factors, as `intel_product(f ORDER BY f)`. */
export function missOf(claims: readonly ClaimStrength[]): number {
  return claims
    .map((claim) => (200 - claim.reliability - claim.credibility) / 200)
    .sort((a, b) => a - b)
    .reduce((product, factor) => product * factor, 1);
}

/** The decay factor `days` after the anchor (1 at or before it, or without decay). */
export function decayAt(decay: Decay | null, anchorAt: Date, at: Date): number {
  if (decay === null || at.getTime() <= anchorAt.getTime()) return 1;
  const r = (at.getTime() - anchorAt.getTime()) / 1000 / 86400 / decay.lifetimeDays;
  // As intel_decay spells out PostgreSQL's ends: 0 from the lifetime on, 1 where the power is below e^-740.
  if (r >= 1) return 0;
  if (Math.log(r) / decay.speed < -740) return 1;
  return 1 - Math.pow(r, 1 / decay.speed);
}

export const overrideHolds = (override: Override | null, at: Date): override is Override =>
  override !== null && (override.until === null || at.getTime() < override.until.getTime());

/** The score at `at` and its factors (the override, while it holds, is the score alone). */
export function scoreOf(inputs: ScoreInputs, at: Date): ScoreParts {
  const base = 100 * (1 - missOf(inputs.claims));
  const { count, falsePositives } = inputs.sightings;
  const fp = (count + 1) / (count + falsePositives + 1);
  const decay = decayAt(inputs.decay, inputs.anchorAt, at);
  const score = overrideHolds(inputs.override, at) ? inputs.override.score : Math.floor(base * fp * decay + 0.5);
  return { score, base, fp, decay };
}

/** The score without decay (STIX `confidence`): `base × fp` rounded, or the override's score while it holds. */
export function confidenceOf(inputs: ScoreInputs, at: Date): number {
  if (overrideHolds(inputs.override, at)) return inputs.override.score;
  const { base, fp } = scoreOf({ ...inputs, decay: null, override: null }, at);
  return Math.floor(base * fp + 0.5);
}

/**
 * The first moment at or after `from` when the score is below `bound`, with the inputs as they are; null if
 * never. A decaying score only falls, so the moment is found from the formula and then settled to the
 * millisecond against `scoreOf` itself (so it agrees with the SQL's rounding); an override ends at its `until`.
 */
export function belowAt(inputs: ScoreInputs, bound: number, from: Date): Date | null {
  if (bound <= 0) return null;
  const below = (at: Date) => scoreOf(inputs, at).score < bound;
  if (below(from)) return from;
  if (overrideHolds(inputs.override, from)) {
    if (inputs.override.until === null) return null;
    return belowAt({ ...inputs, override: null }, bound, inputs.override.until);
  }
  if (inputs.decay === null) return null;
  // score < bound ⟺ base·fp·decay + 0.5 < bound: the decay below q, reached `lifetime × (1 − q)^speed` days on.
  const { base, fp } = scoreOf(inputs, from);
  const q = (bound - 0.5) / (base * fp);
  const days = inputs.decay.lifetimeDays * Math.pow(Math.max(0, 1 - q), inputs.decay.speed);
  let lo = from.getTime();
  let hi = Math.max(lo + 1, inputs.anchorAt.getTime() + Math.ceil(days * DAY_MS) + 1);
  while (!below(new Date(hi))) hi += DAY_MS; // guards a rounding of the estimate, never loops long: decay reaches 0
  // Bisect to the first millisecond: below(lo) is false, below(hi) true.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (below(new Date(mid))) hi = mid;
    else lo = mid;
  }
  return new Date(hi);
}
