/**
 * The marking of an object's source claims (extensions §19), `intel_object.claimed_tlp`: the most restrictive
 * `sources_claim.tlp` among the claims the sources of its collection hold on any of its keys, NULL without
 * one. Sources settle their claims under the collection's exclusive writer lock before their run writes
 * (BatchService.applyRun), so every writer that holds the collection's writer lock reads them as they will
 * commit: a batch gives each object it writes the marking of its claims in the very statement that writes it
 * (so its Add or Update record carries it), and a run re-marks the objects it does not rewrite whose claims it
 * changed (RunStage.remark). A single add computes it in its insert too: a source's claim may outlive the
 * object (a native delete, an expiry), and the object added again carries it.
 */

/**
 * The claims on the keys of `keys` (a FROM item naming each key `q.type`, `q.value`) held by the sources of
 * the collection named `collection` (an SQL expression), as rows `c` of sources_claim.
 */
export const CLAIMS_ON = (keys: string, collection: string) =>
  `${keys} JOIN sources_claim c ON c.key_type = q.type AND c.value = q.value
     JOIN sources_source s ON s.id = c.source_id AND s.collection = ${collection}`;

/** The marking of the source claims on `keys` (a jsonb expression: the object's keys) in the collection named `collection`; NULL without one. */
export const CLAIMED_MARKING = (keys: string, collection: string) =>
  `(SELECT max(c.tlp) FROM ${CLAIMS_ON(`jsonb_to_recordset(${keys}) AS q(type text, value text)`, collection)})`;
