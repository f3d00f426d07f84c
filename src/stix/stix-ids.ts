import canonicalize from 'canonicalize';
import { v5 as uuidv5 } from 'uuid';

/** The namespace of deterministic SCO ids (STIX 2.1 §2.9). */
export const STIX_SCO_NAMESPACE = '00abedb4-aa42-466c-9c01-fed23315a9b7';

/** The service's own identity, named as the creator of what it projects and of its extension definition. */
export const SERVICE_IDENTITY_ID = 'identity--5267cee6-3292-43d0-9f80-be48a8441dae';

/** The extension definition under which an object's `context` travels on its indicator. */
export const CONTEXT_EXTENSION_ID = 'extension-definition--4bf25bbc-6c10-46ee-9f8e-7fa8323f5b24';

/**
 * The one hash of a `file` that contributes to its id: the first of MD5, SHA-1, SHA-256, SHA-512 it has,
 * else its first hash (the rule of the STIX reference implementation, so both compute the same id).
 */
export function idContributingHash(hashes: Record<string, string>): Record<string, string> | undefined {
  const name = ['MD5', 'SHA-1', 'SHA-256', 'SHA-512'].find((candidate) => candidate in hashes) ?? Object.keys(hashes)[0];
  return name === undefined ? undefined : { [name]: hashes[name] };
}

/**
 * A deterministic SCO id: `<type>--` and the UUIDv5, in the STIX namespace, of the RFC 8785 canonical JSON
 * of the id-contributing properties (for the types projected here: `value`, or for `file` one hash).
 */
export function scoId(type: string, contributing: Record<string, unknown>): string {
  return `${type}--${uuidv5(canonicalize(contributing)!, STIX_SCO_NAMESPACE)}`;
}
