/**
 * A collection's `scoring` (extensions §18): decay per object type, the threshold, what happens below it, and
 * its TAXII views. Stored whole with the defaults filled in (intel_collection.scoring), so that statements
 * read one jsonb and never apply defaults; a PATCH replaces it whole (members left out take their defaults).
 */
import type { Decay } from './score.js';

export const DECAYING_TYPES = ['File', 'DomainName', 'URL', 'IPAddress', 'IPNetwork'] as const;
export type DecayingType = (typeof DECAYING_TYPES)[number];

export const DECAYED_ACTIONS = ['keep', 'expire'] as const;
export type DecayedAction = (typeof DECAYED_ACTIONS)[number];

export interface TaxiiView {
  alias: string;
  minScore: number;
}

export interface Scoring {
  /** Per type; null: the type never decays. */
  decay: Record<DecayingType, Decay | null>;
  threshold: number;
  decayedAction: DecayedAction;
  taxiiViews: TaxiiView[];
}

/**
 * The defaults and why (docs/scoring.md): addresses are re-assigned within weeks (60 days, falling fast late:
 * speed 2), URLs live a little longer, networks and domains for months at an even pace (speed 1), and a file's
 * hash never changes meaning, so it decays slowly and early doubts fade first (speed 0.5).
 */
export const DEFAULT_DECAY: Record<DecayingType, Decay> = {
  File: { lifetimeDays: 460, speed: 0.5 },
  DomainName: { lifetimeDays: 300, speed: 1 },
  URL: { lifetimeDays: 90, speed: 2 },
  IPAddress: { lifetimeDays: 60, speed: 2 },
  IPNetwork: { lifetimeDays: 180, speed: 1 },
};

export const DEFAULT_SCORING: Scoring = { decay: DEFAULT_DECAY, threshold: 0, decayedAction: 'keep', taxiiViews: [] };

/** A view's alias: a path segment of the TAXII API as it is (the same characters as a collection name). */
export const TAXII_VIEW_ALIAS = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** One refusal of the form, naming its member (the caller makes it a 400 InvalidData). */
export class ScoringFormError extends Error {}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNumberIn = (value: unknown, min: number, max: number) => typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;

function decayOf(type: DecayingType, value: unknown): Decay | null {
  if (value === null) return null;
  if (!isObject(value)) throw new ScoringFormError(`scoring.decay.${type} must be an object {lifetimeDays, speed} or null`);
  const unknown = Object.keys(value).find((key) => key !== 'lifetimeDays' && key !== 'speed');
  if (unknown !== undefined) throw new ScoringFormError(`scoring.decay.${type}.${unknown} is not a member of a decay`);
  const { lifetimeDays, speed } = value;
  if (typeof lifetimeDays !== 'number' || !Number.isFinite(lifetimeDays) || lifetimeDays <= 0) {
    throw new ScoringFormError(`scoring.decay.${type}.lifetimeDays must be a number above 0`);
  }
  if (typeof speed !== 'number' || !Number.isFinite(speed) || speed <= 0) throw new ScoringFormError(`scoring.decay.${type}.speed must be a number above 0`);
  return { lifetimeDays, speed };
}

/** The stored form of a `scoring` member as sent (undefined or null: the defaults); throws ScoringFormError naming the bad member. */
export function scoringOf(input: unknown): Scoring {
  if (input === undefined || input === null) return DEFAULT_SCORING;
  if (!isObject(input)) throw new ScoringFormError('scoring must be an object or null');
  const unknown = Object.keys(input).find((key) => !['decay', 'threshold', 'decayedAction', 'taxiiViews'].includes(key));
  if (unknown !== undefined) throw new ScoringFormError(`scoring.${unknown} is not a member of scoring`);
  const decay = { ...DEFAULT_DECAY } as Record<DecayingType, Decay | null>;
  if (input.decay !== undefined) {
    if (!isObject(input.decay)) throw new ScoringFormError('scoring.decay must be an object keyed by object type');
    for (const [type, value] of Object.entries(input.decay)) {
      if (!(DECAYING_TYPES as readonly string[]).includes(type))
        throw new ScoringFormError(`scoring.decay.${type}: the types are ${DECAYING_TYPES.join(', ')}`);
      decay[type as DecayingType] = decayOf(type as DecayingType, value);
    }
  }
  const threshold = input.threshold ?? 0;
  if (!isNumberIn(threshold, 0, 100)) throw new ScoringFormError('scoring.threshold must be a number from 0 to 100');
  const decayedAction = input.decayedAction ?? 'keep';
  if (!(DECAYED_ACTIONS as readonly unknown[]).includes(decayedAction)) throw new ScoringFormError('scoring.decayedAction must be keep or expire');
  return { decay, threshold: threshold as number, decayedAction: decayedAction as DecayedAction, taxiiViews: taxiiViewsOf(input.taxiiViews) };
}

function taxiiViewsOf(input: unknown): TaxiiView[] {
  if (input === undefined) return [];
  if (!Array.isArray(input)) throw new ScoringFormError('scoring.taxiiViews must be an array of {alias, minScore}');
  const aliases = new Set<string>();
  return input.map((view, i) => {
    if (!isObject(view) || Object.keys(view).some((key) => key !== 'alias' && key !== 'minScore')) {
      throw new ScoringFormError(`scoring.taxiiViews[${i}] must be an object {alias, minScore}`);
    }
    if (typeof view.alias !== 'string' || !TAXII_VIEW_ALIAS.test(view.alias)) {
      throw new ScoringFormError(`scoring.taxiiViews[${i}].alias must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
    }
    if (aliases.has(view.alias)) throw new ScoringFormError(`scoring.taxiiViews[${i}].alias ${view.alias} is given twice`);
    aliases.add(view.alias);
    if (!isNumberIn(view.minScore, 0, 100)) throw new ScoringFormError(`scoring.taxiiViews[${i}].minScore must be a number from 0 to 100`);
    return { alias: view.alias, minScore: view.minScore as number };
  });
}
