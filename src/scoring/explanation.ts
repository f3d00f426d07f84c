/**
 * The explanation of a score (extensions §18): the inputs as read with the SQL's score (scoring.repository.ts),
 * taken apart by the TypeScript twin (score.ts) into the factors, and the moment it falls below the threshold.
 */
import { credibilityOf, reliabilityOfRank, reliabilityValue, type Credibility, type Reliability } from './admiralty.js';
import type { ScoreClaimView, ScoreExplanationView } from './dto/score.dto.js';
import { API_CREDIBILITY, scoreInputsOf } from './score-inputs.js';
import { belowAt, scoreOf, strengthOf } from './score.js';
import type { ScoreInputsRow } from './scoring.repository.js';

/** A claim's view: its letter, its digit (or the percentage a record gave), and the strength their values give. */
function claimView(
  origin: ScoreClaimView['origin'],
  source: string | null,
  code: { reliability: Reliability; credibility: Credibility | null },
  credibility: number,
  lastSeenAt: string,
): ScoreClaimView {
  const reliability = reliabilityValue(code.reliability);
  return {
    origin,
    source,
    reliability: code.reliability,
    credibility: code.credibility ?? credibilityOf(credibility),
    strength: strengthOf({ reliability, credibility }),
    lastSeenAt,
  };
}

/** The explanation at `at`: the score is the SQL's (every filter's); the factors and belowThresholdAt the twin's. */
export function explanationOf(row: ScoreInputsRow, at: Date): ScoreExplanationView {
  const inputs = scoreInputsOf(row);
  const { base, fp, decay } = scoreOf(inputs, at);
  // From the anchor: the moment it falls (or fell) below with these inputs, whatever the moment asked.
  const below = belowAt(inputs, row.threshold, inputs.anchorAt);
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
      ...(row.apiReliability === null || row.apiLastSeenAt === null
        ? []
        : [claimView('api', null, { reliability: reliabilityOfRank(row.apiReliability), credibility: 6 }, API_CREDIBILITY, row.apiLastSeenAt)]),
      ...row.sources.map((claim) =>
        claimView('source', claim.source, { reliability: claim.reliabilityCode, credibility: claim.credibilityCode }, claim.credibility, claim.lastSeenAt),
      ),
    ],
    sightings: { count: row.count, falsePositives: row.falsePositives },
    override: row.override === null ? null : { score: row.override, until: row.overrideUntil, reason: row.overrideReason ?? '', keyID: row.overrideKeyID },
  };
}
