/** RFC 3339 date-time with an explicit offset (`Z` or ±hh:mm), up to nanoseconds. */
export const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The moment an RFC 3339 date-time names, kept to milliseconds; undefined when it is not of that form or
 * names no day of the calendar (Date alone would roll 2030-02-30 over into March).
 */
export function parseDateTime(text: string): Date | undefined {
  if (!DATE_TIME_PATTERN.test(text)) return undefined;
  const [year, month, day, hour, minute, second] = text.split(/[-T:.Z+]/).map(Number);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(text);
  const valid =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= (month === 2 && !leap ? 28 : DAYS_IN_MONTH[month - 1]) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    (!offset || (Number(offset[2]) <= 23 && Number(offset[3]) <= 59));
  // Date parses at most milliseconds: further digits are cut first.
  const at = valid ? new Date(text.replace(/(\.\d{3})\d+/, '$1')) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
}
