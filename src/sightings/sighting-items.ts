import { ApiError } from '../common/errors/api-error.js';
import { KEY_TYPES, normalizeKey, type KeyType, type ObjectKey } from '../common/indicators/indicators.js';
import { MAX_INPUT_KEY_LENGTH } from '../common/indicators/object-form.dto.js';
import { parseDateTime } from '../common/validation/date-time.js';
import { isUnstorableText } from '../common/validation/json-body.js';
import { UUID_PATTERN } from '../common/validation/uuid.js';
import { MAX_CLOCK_AHEAD_MS, MAX_SIGHTING_COUNT, MAX_SOURCE_LENGTH, SIGHTING_KINDS, type SightingKind } from './dto/sighting.dto.js';

/** A sighting item as it is stored. */
export interface SightingItem {
  key: ObjectKey;
  kind: SightingKind;
  source: string;
  /** ISO 8601, milliseconds, UTC. */
  at: string;
  count: number;
  /** The client's id, lower case; null when the item has none. */
  id: string | null;
}

const UNSTORABLE = 'may not contain U+0000 or an unpaired UTF-16 surrogate (the database cannot store them)';

const FIELDS = new Set(['type', 'value', 'objectKeyType', 'objectKey', 'kind', 'source', 'at', 'count', 'id']);

/** What the rules of one item depend on besides the item: the default source, the clock, the retention. */
export interface ItemRules {
  defaultSource: string;
  now: Date;
  retentionDays: number;
}

/** One item of `POST /intel/sightings` checked and completed with its defaults, or why it is Invalid. */
export function parseSightingItem(raw: unknown, rules: ItemRules): SightingItem | { invalid: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { invalid: 'an item must be a JSON object' };
  const item = raw as Record<string, unknown>;
  const unknown = Object.keys(item).find((name) => !FIELDS.has(name));
  if (unknown !== undefined) return { invalid: `unknown field ${JSON.stringify(unknown).slice(0, 64)}` };

  const byType = item.type !== undefined || item.value !== undefined;
  const byObjectKey = item.objectKeyType !== undefined || item.objectKey !== undefined;
  if (byType === byObjectKey) return { invalid: 'name the key by either type and value or objectKeyType and objectKey' };
  const [type, value] = byType ? [item.type, item.value] : [item.objectKeyType, item.objectKey];
  if (typeof type !== 'string' || !KEY_TYPES.includes(type as KeyType)) return { invalid: `the key type must be one of ${KEY_TYPES.join(', ')}` };
  if (typeof value !== 'string' || value.length > MAX_INPUT_KEY_LENGTH) {
    return { invalid: `the key value must be a string of at most ${MAX_INPUT_KEY_LENGTH} characters` };
  }
  // The body is taken whole (not through a DTO), so the pipe left its text unchecked: text columns take no U+0000.
  if (isUnstorableText(value)) return { invalid: `the key value ${UNSTORABLE}` };
  let key: ObjectKey;
  try {
    key = normalizeKey({ type: type as KeyType, value });
  } catch (error) {
    if (error instanceof ApiError) return { invalid: error.message };
    throw error;
  }

  const kind = item.kind ?? 'sighting';
  if (!SIGHTING_KINDS.includes(kind as SightingKind)) return { invalid: `kind must be ${SIGHTING_KINDS.join(' or ')}` };
  const source = item.source ?? rules.defaultSource;
  if (typeof source !== 'string' || source.length === 0 || source.length > MAX_SOURCE_LENGTH) {
    return { invalid: `source must be a text of 1 to ${MAX_SOURCE_LENGTH} characters` };
  }
  if (isUnstorableText(source)) return { invalid: `source ${UNSTORABLE}` };
  const count = item.count ?? 1;
  if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > MAX_SIGHTING_COUNT) {
    return { invalid: `count must be an integer from 1 to ${MAX_SIGHTING_COUNT}` };
  }
  const id = item.id ?? null;
  if (id !== null && (typeof id !== 'string' || !UUID_PATTERN.test(id))) return { invalid: 'id must be a UUID' };

  let at = rules.now;
  if (item.at !== undefined) {
    const parsed = typeof item.at === 'string' ? parseDateTime(item.at) : undefined;
    if (!parsed) return { invalid: 'at must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z' };
    if (parsed.getTime() > rules.now.getTime() + MAX_CLOCK_AHEAD_MS) return { invalid: 'at is more than 5 minutes in the future' };
    if (parsed.getTime() < rules.now.getTime() - rules.retentionDays * 86_400_000) {
      return { invalid: `at is older than the sighting retention (${rules.retentionDays} days)` };
    }
    at = parsed;
  }
  return { key, kind: kind as SightingKind, source, at: at.toISOString(), count: count as number, id: id === null ? null : id.toLowerCase() };
}
