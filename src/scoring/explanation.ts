/**
 * The explanation of a score (extensions §18): the inputs as read with the SQL's score (scoring.repository.ts),
 * taken apart by the TypeScript twin (score.ts) into the factors, and the moment it falls below the threshold.
 */
import { credibilityOf, reliabilityOf } from './admiralty.js';
import type { ScoreClaimView, ScoreExplanationView } from './dto/score.dto.js';
import { belowAt, scoreOf, strengthOf, type ScoreInputs } from './score.js';
import type { ScoreInputsRow } from './scoring.repository.js';

/** The api claim's credibility: `6`, "cannot be judged" (extensions §18). */
const API_CREDIBILITY = 50;

/** The inputs of score.ts from the row; the anchor in the SQL's whole milliseconds (ScoreInputsRow.anchorMs). */
export function scoreInputsOf(row: ScoreInputsRow): ScoreInputs {
  const api = row.apiReliability === null ? [] : [{ reliability: row.apiReliability, credibility: API_CREDIBILITY }];
  return {
    claims: [...api, ...row.sources.map(({ reliability, credibility }) => ({ reliability, credibility }))],
    sightings: { count: row.count, falsePositives: row.falsePositives },
    anchorAt: new Date(row.anchorMs),
    decay: row.decay,
    override: row.override === null ? null : { score: row.override, until: row.overrideUntil === null ? null : new Date(row.overrideUntil) },
  };
}

function claimView(origin: ScoreClaimView['origin'], source: string | null, reliability: number, credibility: number, lastSeenAt: string): ScoreClaimView {
  return {
    origin,
    source,
    reliability: reliabilityOf(reliability),
    credibility: credibilityOf(credibility),
    strength: strengthOf({ reliability, credibility }),
    lastSeenAt,
  };
}

/** The explanation at `at`: the score is the SQL's (every filter's); the factors and belowThresholdAt the twin's. */
export function explanationOf(row: ScoreInputsRow, at: Date): ScoreExplanationView {
  const inputs = scoreInputsOf(row);
  const { base, fp, decay } = scoreOf(inputs, at);
  const below = belowAt(inputs, row.threshold, at);
  return {
    score: row.score,
    at: at.toISOString(),
    base,
    fp,
    decay,
    anchorAt: row.anchorAt,
    anchor: row.anchor,
    lifetimeDays: row.decay?.lifetimeDays ?? null,
    speed: row.decay?.speed ?? null,
    threshold: row.threshold,
    belowThresholdAt: below === null ? null : below.toISOString(),
    claims: [
      ...(row.apiReliability === null || row.apiLastSeenAt === null ? [] : [claimView('api', null, row.apiReliability, API_CREDIBILITY, row.apiLastSeenAt)]),
      ...row.sources.map((claim) => claimView('source', claim.source, claim.reliability, claim.credibility, claim.lastSeenAt)),
    ],
    sightings: { count: row.count, falsePositives: row.falsePositives },
    override: row.override === null ? null : { score: row.override, until: row.overrideUntil, reason: row.overrideReason ?? '', keyID: row.overrideKeyID },
  };
}
