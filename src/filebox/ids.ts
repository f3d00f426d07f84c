const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** File and session ids are UUIDs; anything else names nothing (404, decisions §10). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
