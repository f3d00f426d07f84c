/**
 * The api claim (extensions §13 "Claims"): an object is claimed by `api` once any native write (single,
 * batch, import, TAXII, console, extension) added or updated it; a source run's writes claim it for their
 * source instead. Its first and last time are columns of the object row, set by the very statement that
 * writes the object (no statement of their own), from the write's origin parameter `via`. `now()` is the
 * transaction's time, the `created_at` of the change record the same statement writes.
 */

/** Whether a write with this origin (`via`, a text parameter) claims the object for the api. */
const claimsForApi = (via: string) => `(${via}::text IS DISTINCT FROM 'source')`;

/** `api_first_seen_at, api_last_seen_at` of an inserted object (both null when a source inserts it). */
export const apiClaimOnInsert = (via: string) => {
  const seen = `CASE WHEN ${claimsForApi(via)} THEN now() END`;
  return `${seen}, ${seen}`;
};

/** The SET items of an updated object `row`: the first time kept once set, the last time moved by a native write. */
export const apiClaimOnUpdate = (row: string, via: string) =>
  `api_first_seen_at = COALESCE(${row}.api_first_seen_at, CASE WHEN ${claimsForApi(via)} THEN now() END),
   api_last_seen_at = CASE WHEN ${claimsForApi(via)} THEN now() ELSE ${row}.api_last_seen_at END`;
