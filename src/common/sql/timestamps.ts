/**
 * The one spelling of a timestamp as text in SQL: ISO 8601 in UTC with a `Z`, from a timestamptz expression
 * (null stays null). Every view and cursor that shows a time reads it through these two, so the format is
 * written once.
 */

/** `to_char` of `timestamp` in UTC with the given fractional seconds (`MS` milliseconds, `US` microseconds). */
const utcText = (timestamp: string, fraction: 'MS' | 'US') => `to_char((${timestamp}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.${fraction}"Z"')`;

/** Milliseconds: the form of times in views (`expiresAt`, `firstSeenAt`, ...; stored truncated to milliseconds). */
export const isoUtc = (timestamp: string) => utcText(timestamp, 'MS');

/** Microseconds: feed times and positions as text (a JS Date would drop the microseconds). */
export const isoMicros = (timestamp: string) => utcText(timestamp, 'US');
