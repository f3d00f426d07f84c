/**
 * TLP 2.0 markings (extensions §19): the five levels, their order, how input spells them and how STIX marks
 * them. Common: the read policy, the writers, the STIX projection and the
 * parsers of the feed formats all speak it. Stored as the level's rank (a smallint): `tlp <= ceiling` is
 * the whole read rule.
 */

export const TLP_LEVELS = ['TLP:CLEAR', 'TLP:GREEN', 'TLP:AMBER', 'TLP:AMBER+STRICT', 'TLP:RED'] as const;
export type Tlp = (typeof TLP_LEVELS)[number];

/** A level's place in the order: 0 (CLEAR) to 4 (RED); what the database stores. */
export type TlpRank = 0 | 1 | 2 | 3 | 4;

export const CLEAR: TlpRank = 0;
export const RED: TlpRank = 4;

/** The spelling of a rank (output is always one of the five TLP 2.0 spellings). */
export const tlpOf = (rank: number): Tlp => TLP_LEVELS[rank] ?? 'TLP:RED';

/** The rank of an input spelling: case-insensitive, `TLP:WHITE` for CLEAR; undefined for anything else. */
export function rankOf(input: unknown): TlpRank | undefined {
  if (typeof input !== 'string') return undefined;
  const upper = input.trim().toUpperCase();
  const rank = TLP_LEVELS.indexOf((upper === 'TLP:WHITE' ? 'TLP:CLEAR' : upper) as Tlp);
  return rank < 0 ? undefined : (rank as TlpRank);
}

/** The input spellings the DTOs accept, for their messages. */
export const TLP_INPUT_HINT = `one of ${TLP_LEVELS.join(', ')} (case-insensitive; TLP:WHITE for TLP:CLEAR)`;

/** The most restrictive of some ranks (CLEAR when none). */
export const mostRestrictive = (ranks: Iterable<TlpRank | undefined>): TlpRank => {
  let max: TlpRank = CLEAR;
  for (const rank of ranks) if (rank !== undefined && rank > max) max = rank;
  return max;
};

/** The TLP 2.0 marking definitions of STIX 2.1, by rank: what every STIX indicator and observable refers to. */
export const TLP2_MARKING_IDS: readonly string[] = [
  'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487',
  'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb',
  'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421',
  'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003',
  'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1',
];

/** The TLP 1.0 marking definitions of STIX 2.1, which input counts as their TLP 2.0 levels. */
const TLP1_MARKING_IDS: Readonly<Record<string, TlpRank>> = {
  'marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9': 0,
  'marking-definition--34098fce-860f-48ae-8e50-ebd3cc5e41da': 1,
  'marking-definition--f88d31f6-486f-44da-b317-01333bde0b82': 2,
  'marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed': 4,
};

/** The marking a STIX object's `object_marking_refs` carry: the most restrictive TLP among them; undefined when none is a TLP. */
export function rankOfMarkingRefs(refs: unknown): TlpRank | undefined {
  if (!Array.isArray(refs)) return undefined;
  const ranks = refs.map((ref) => (typeof ref !== 'string' ? undefined : (TLP1_MARKING_IDS[ref] ?? markingRank(ref))));
  return ranks.some((rank) => rank !== undefined) ? mostRestrictive(ranks) : undefined;
}

function markingRank(ref: string): TlpRank | undefined {
  const rank = TLP2_MARKING_IDS.indexOf(ref);
  return rank < 0 ? undefined : (rank as TlpRank);
}

/** The marking a MISP event's or attribute's tags carry (`tlp:white`/`tlp:clear` … `tlp:red`): the most restrictive; undefined when none. */
export function rankOfTags(tags: readonly string[]): TlpRank | undefined {
  const ranks = tags.map((tag) => (/^tlp:/i.test(tag.trim()) ? rankOf(tag) : undefined));
  return ranks.some((rank) => rank !== undefined) ? mostRestrictive(ranks) : undefined;
}
