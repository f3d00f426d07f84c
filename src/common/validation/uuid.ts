/** A canonical hyphenated UUID, as the source of a pattern (lower-case hex; the `i` flag takes any case). */
export const UUID_SOURCE = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** Canonical hyphenated UUID, any case (the SDK sends lower case; stored and shown in lower case). */
export const UUID_PATTERN = new RegExp(`^${UUID_SOURCE}$`, 'i');

/** Lower case only: the form the service writes itself (`randomUUID()`), e.g. the file store's keys. */
export const LOWER_CASE_UUID_PATTERN = new RegExp(`^${UUID_SOURCE}$`);

/** Ids that are UUIDs (files, sessions, tasks, TAXII ids): anything else names nothing. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
