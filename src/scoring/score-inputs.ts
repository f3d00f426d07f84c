/**
 * An object's score inputs as the SQL function `intel_object_score_inputs` reads them (migration Scoring), claim
 * by claim, and as the TypeScript twin (score.ts) takes them: for what only the twin tells (an explanation's
 * factors, the moment a score falls below a bound).
 */
import { rankValue, type Credibility, type Reliability } from './admiralty.js';
import type { Decay, ScoreInputs } from './score.js';

/** A source's claims on the object's keys, as the score counts them: once, at their strongest and latest. */
export interface SourceClaimInputs {
  source: string;
  reliability: number;
  credibility: number;
  /** The source's letter and digit as its form gives them (the digit null when a record gave its own credibility). */
  reliabilityCode: Reliability;
  credibilityCode: Credibility | null;
  lastSeenAt: string;
}

export interface StoredScoreInputs {
  /** The api claim's reliability, a rank (admiralty.ts: reliabilityRank; its credibility is 6); null without an api claim. */
  apiReliability: number | null;
  apiLastSeenAt: string | null;
  sources: SourceClaimInputs[];
  count: number;
  falsePositives: number;
  /** The anchor as views show times (milliseconds, cut). */
  anchorAt: string;
  /** The anchor in epoch milliseconds, rounded up: intel_score counts whole milliseconds from its microseconds down. */
  anchorMs: number;
  anchor: 'claim' | 'sighting';
  decay: Decay | null;
  threshold: number;
  override: number | null;
  overrideUntil: string | null;
  overrideReason: string | null;
  overrideKeyID: number | null;
}

/** The api claim's credibility: `6`, "cannot be judged" (extensions §18). */
export const API_CREDIBILITY = 50;

/** The inputs of score.ts; the anchor in the SQL's whole milliseconds. */
export function scoreInputsOf(stored: StoredScoreInputs): ScoreInputs {
  const api = stored.apiReliability === null ? [] : [{ reliability: rankValue(stored.apiReliability), credibility: API_CREDIBILITY }];
  return {
    claims: [...api, ...stored.sources.map(({ reliability, credibility }) => ({ reliability, credibility }))],
    sightings: { count: stored.count, falsePositives: stored.falsePositives },
    anchorAt: new Date(stored.anchorMs),
    decay: stored.decay,
    override: stored.override === null ? null : { score: stored.override, until: stored.overrideUntil === null ? null : new Date(stored.overrideUntil) },
  };
}
