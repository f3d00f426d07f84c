/**
 * The api claim (extensions §13 "Claims"): an object is claimed by `api` once any native write (single,
 * batch, import, TAXII, console, extension) added or updated it; a source run's writes claim it for their
 * source instead. Its first and last time and its marking are columns of the object row, set by the very
 * statement that writes the object (no statement of their own), from the write's origin parameter `via`
 * and its marking `tlp` (a smallint parameter or column). `now()` is the transaction's time, the
 * `created_at` of the change record the same statement writes.
 *
 * Its reliability `api_reliability` (extensions §18) is the highest among its writers' keys' (WriteOrigin's
 * `reliability`, a smallint parameter): an insert takes the writer's, an update the greater of both. An
 * identical re-send changes nothing of the object and writes no change record, but still refreshes the claim
 * (its last time, the anchor of its score, and its reliability) when it is behind (`apiClaimBehind`).
 *
 * The claim's marking `api_tlp` (extensions §19) is the marking of the latest native write, so a later write
 * may lower it. A native write always carries one (its `tlp` parameter, a TAXII object's markings, else the
 * collection's `defaultTLP`); a source write carries none (null) and leaves it as it is: its marking is its
 * source claim's (`claimed_tlp`). The default is resolved by the service, from the collection row it holds
 * (cached) anyway, not in SQL: every statement then takes one concrete marking per written row, a batch's
 * items each their own as a TAXII envelope's objects need, with no look-up of the collection row per write.
 */

/** Whether a write with this origin (`via`, a text parameter) claims the object for the api. */
const claimsForApi = (via: string) => `(${via}::text IS DISTINCT FROM 'source')`;

/** `api_first_seen_at, api_last_seen_at, api_tlp, api_reliability` of an inserted object (all null when a source inserts it). */
export const apiClaimOnInsert = (via: string, tlp: string, reliability: string) => {
  const seen = `CASE WHEN ${claimsForApi(via)} THEN now() END`;
  return `${seen}, ${seen}, CASE WHEN ${claimsForApi(via)} THEN ${tlp}::smallint END, CASE WHEN ${claimsForApi(via)} THEN ${reliability}::smallint END`;
};

/**
 * The SET items of an updated object `row`: the first time kept once set, the last time and the marking moved
 * by a native write, the reliability raised to the writer's when it is higher.
 */
export const apiClaimOnUpdate = (row: string, via: string, tlp: string, reliability: string) =>
  `api_first_seen_at = COALESCE(${row}.api_first_seen_at, CASE WHEN ${claimsForApi(via)} THEN now() END),
   api_last_seen_at = CASE WHEN ${claimsForApi(via)} THEN now() ELSE ${row}.api_last_seen_at END,
   api_tlp = CASE WHEN ${claimsForApi(via)} THEN ${tlp}::smallint ELSE ${row}.api_tlp END,
   api_reliability = CASE WHEN ${claimsForApi(via)} THEN GREATEST(${row}.api_reliability, ${reliability}::smallint) ELSE ${row}.api_reliability END`;

/**
 * How long the api claim's last time may lag behind an identical native re-send (extensions §18, the anchor
 * "kept to the hour"): within it such a re-send writes nothing, so that re-sending costs nothing.
 */
export const API_SEEN_RESOLUTION = `interval '1 hour'`;

/**
 * Whether an identical native re-send by a key of `reliability` must still write the api claim of `row` (which
 * has one): last seen more than API_SEEN_RESOLUTION ago, or by less reliable keys only. The statement that
 * refreshes the claim (object-statements.ts) checks it on the row it locked; the decisions read its two
 * inputs beforehand (`apiClaimBehind` of object-rules.ts), so that a re-send that need not write sends nothing.
 */
export const apiClaimBehind = (row: string, reliability: string) =>
  `(${row}.api_last_seen_at < now() - ${API_SEEN_RESOLUTION} OR ${row}.api_reliability IS NULL OR ${row}.api_reliability < ${reliability}::smallint)`;

/** The inputs of `apiClaimBehind` as the decisions read them with the object: `apiReliability`, `apiSeenLately`. */
export const API_CLAIM_FRESHNESS = (row: string) =>
  `${row}.api_reliability AS "apiReliability", ${row}.api_last_seen_at >= now() - ${API_SEEN_RESOLUTION} AS "apiSeenLately"`;

/**
 * Whether the object `row` already carries the write's marking in its api claim (always true for a write that
 * does not claim for the api): a native write that would change nothing but the marking is an Update.
 */
export const apiMarkingHeld = (row: string, via: string, tlp: string) => `(NOT ${claimsForApi(via)} OR ${row}.api_tlp IS NOT DISTINCT FROM ${tlp}::smallint)`;
