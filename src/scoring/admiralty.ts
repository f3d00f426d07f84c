/**
 * The Admiralty code (extensions §18): a source's reliability `A`…`F` and an item's credibility `1`…`6`, each
 * counted as a number from 100 down to 0 in steps of 25, as MISP's admiralty-scale taxonomy numbers them,
 * except "cannot be judged" (F, 6), which counts as a neutral 50. Stored as those numbers (smallint).
 */
export const RELIABILITIES = ['A', 'B', 'C', 'D', 'E', 'F'] as const;
export type Reliability = (typeof RELIABILITIES)[number];
export const CREDIBILITIES = [1, 2, 3, 4, 5, 6] as const;
export type Credibility = (typeof CREDIBILITIES)[number];

const VALUES = [100, 75, 50, 25, 0, 50];

export const DEFAULT_RELIABILITY: Reliability = 'F';
export const DEFAULT_CREDIBILITY: Credibility = 6;

export const reliabilityValue = (reliability: Reliability): number => VALUES[RELIABILITIES.indexOf(reliability)];
export const credibilityValue = (credibility: Credibility): number => VALUES[credibility - 1];

/**
 * A key's reliability, and an api claim's (the highest among its writers' keys), are stored as ranks, by value
 * (E 0, D 1, F 2, C 3, B 4, A 5): GREATEST keeps the most reliable, and C, which counts as F does (50), still
 * reads back as the C it was given (a judgement is kept over "cannot be judged").
 */
const RANKED: readonly Reliability[] = ['E', 'D', 'F', 'C', 'B', 'A'];
export const reliabilityRank = (reliability: Reliability): number => RANKED.indexOf(reliability);
export const reliabilityOfRank = (rank: number): Reliability => RANKED[rank] ?? DEFAULT_RELIABILITY;
export const rankValue = (rank: number): number => reliabilityValue(reliabilityOfRank(rank));

/** The letter a stored reliability stands for (50 reads as F: C and F count alike, and F is every default). */
export const reliabilityOf = (value: number): Reliability => (value === 50 ? 'F' : (RELIABILITIES[VALUES.indexOf(value)] ?? 'F'));

/** The credibility digit a stored value stands for, or the value itself when no digit has it (a `percent` credibility). */
export const credibilityOf = (value: number): Credibility | number => {
  if (value === 50) return 6;
  const index = VALUES.indexOf(value);
  return index >= 0 ? ((index + 1) as Credibility) : value;
};

/** How a record's own credibility is written (`credibilityScale`): an Admiralty digit, or a percentage counted as is. */
export const CREDIBILITY_SCALES = ['admiralty', 'percent'] as const;
export type CredibilityScale = (typeof CREDIBILITY_SCALES)[number];

/**
 * The value of a record's credibility as written in `scale` (a number or its text), or undefined when it is
 * missing or out of its scale (the record then takes its source's credibility).
 */
export function recordCredibility(raw: unknown, scale: CredibilityScale): number | undefined {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw.trim()) : NaN;
  if (!Number.isInteger(n)) return undefined;
  if (scale === 'percent') return n >= 0 && n <= 100 ? n : undefined;
  return n >= 1 && n <= 6 ? credibilityValue(n as Credibility) : undefined;
}

/** A MISP `admiralty-scale:information-credibility="N"` tag's value, or undefined. */
export function credibilityOfTags(tags: readonly string[]): number | undefined {
  for (const tag of tags) {
    const match = /^admiralty-scale:information-credibility\s*=\s*"?([1-6])"?$/i.exec(tag.trim());
    if (match) return credibilityValue(Number(match[1]) as Credibility);
  }
  return undefined;
}
