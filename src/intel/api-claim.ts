/**
 * The api claim (extensions §13 "Claims"): an object is claimed by `api` once any native write (single,
 * batch, import, TAXII, console, extension) added or updated it; a source run's writes claim it for their
 * source instead. Its first and last time and its marking are columns of the object row, set by the very
 * statement that writes the object (no statement of their own), from the write's origin parameter `via`
 * and its marking `tlp` (a smallint parameter or column). `now()` is the transaction's time, the
 * `created_at` of the change record the same statement writes.
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

/** `api_first_seen_at, api_last_seen_at, api_tlp` of an inserted object (all null when a source inserts it). */
export const apiClaimOnInsert = (via: string, tlp: string) => {
  const seen = `CASE WHEN ${claimsForApi(via)} THEN now() END`;
  return `${seen}, ${seen}, CASE WHEN ${claimsForApi(via)} THEN ${tlp}::smallint END`;
};

/**
 * The SET items of an updated object `row`: the first time kept once set, the last time and the marking moved
 * by a native write.
 */
export const apiClaimOnUpdate = (row: string, via: string, tlp: string) =>
  `api_first_seen_at = COALESCE(${row}.api_first_seen_at, CASE WHEN ${claimsForApi(via)} THEN now() END),
   api_last_seen_at = CASE WHEN ${claimsForApi(via)} THEN now() ELSE ${row}.api_last_seen_at END,
   api_tlp = CASE WHEN ${claimsForApi(via)} THEN ${tlp}::smallint ELSE ${row}.api_tlp END`;

/**
 * Whether the object `row` already carries the write's marking in its api claim (always true for a write that
 * does not claim for the api): a native write that would change nothing but the marking is an Update.
 */
export const apiMarkingHeld = (row: string, via: string, tlp: string) => `(NOT ${claimsForApi(via)} OR ${row}.api_tlp IS NOT DISTINCT FROM ${tlp}::smallint)`;
