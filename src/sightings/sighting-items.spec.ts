import { describe, expect, it } from '@jest/globals';
import { KEY_TYPES } from '../common/indicators/indicators.js';
import { MAX_INPUT_KEY_LENGTH } from '../common/indicators/object-form.dto.js';
import { MAX_SIGHTING_COUNT, MAX_SOURCE_LENGTH } from './dto/sighting.dto.js';
import { parseSightingItem, type ItemRules, type SightingItem } from './sighting-items.js';

const NOW = new Date('2030-06-01T12:00:00.000Z');
const RULES: ItemRules = { defaultSource: 'key-42', now: NOW, retentionDays: 30 };
const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

const ID = '0F8FAD5B-D9CB-469F-A165-70867728950E';
/** The smallest item: a key named by type and value. */
const DOMAIN = { type: 'DomainName', value: 'example.com' };
const UNSTORABLE = 'may not contain U+0000 or an unpaired UTF-16 surrogate (the database cannot store them)';

describe('parseSightingItem: accepted items and their defaults', () => {
  const table: [string, unknown, SightingItem][] = [
    [
      'type and value only: kind sighting, the default source, now, count 1, no id',
      DOMAIN,
      { key: { type: 'DomainName', value: 'example.com' }, kind: 'sighting', source: 'key-42', at: NOW.toISOString(), count: 1, id: null },
    ],
    [
      'objectKeyType and objectKey, every field given; the key normalised, the id lower case',
      {
        objectKeyType: 'MD5Hash',
        objectKey: 'D41D8CD98F00B204E9800998ECF8427E',
        kind: 'falsePositive',
        source: 's',
        at: '2030-06-01T11:00:00+01:00',
        count: 7,
        id: ID,
      },
      {
        key: { type: 'MD5Hash', value: 'd41d8cd98f00b204e9800998ecf8427e' },
        kind: 'falsePositive',
        source: 's',
        at: '2030-06-01T10:00:00.000Z',
        count: 7,
        id: ID.toLowerCase(),
      },
    ],
    [
      'a domain name normalised (case, trailing dot)',
      { type: 'DomainName', value: 'Example.COM.' },
      { key: { type: 'DomainName', value: 'example.com' }, kind: 'sighting', source: 'key-42', at: NOW.toISOString(), count: 1, id: null },
    ],
    [
      'null kind, source, count and id are taken as absent (their defaults); a null at is not (below)',
      { ...DOMAIN, kind: null, source: null, count: null, id: null },
      { key: { type: 'DomainName', value: 'example.com' }, kind: 'sighting', source: 'key-42', at: NOW.toISOString(), count: 1, id: null },
    ],
    [
      'the limits themselves: count at its maximum, source at its longest, at exactly 5 minutes ahead',
      { ...DOMAIN, count: MAX_SIGHTING_COUNT, source: 'x'.repeat(MAX_SOURCE_LENGTH), at: iso(NOW.getTime() + 5 * 60_000) },
      {
        key: { type: 'DomainName', value: 'example.com' },
        kind: 'sighting',
        source: 'x'.repeat(MAX_SOURCE_LENGTH),
        at: iso(NOW.getTime() + 5 * 60_000),
        count: MAX_SIGHTING_COUNT,
        id: null,
      },
    ],
    [
      'at exactly the retention ago',
      { ...DOMAIN, at: iso(NOW.getTime() - 30 * DAY_MS) },
      { key: { type: 'DomainName', value: 'example.com' }, kind: 'sighting', source: 'key-42', at: iso(NOW.getTime() - 30 * DAY_MS), count: 1, id: null },
    ],
  ];

  it.each(table)('%s', (_, raw, expected) => {
    expect(parseSightingItem(raw, RULES)).toEqual(expected);
  });
});

describe('parseSightingItem: every refusal', () => {
  const types = `the key type must be one of ${KEY_TYPES.join(', ')}`;
  const value = `the key value must be a string of at most ${MAX_INPUT_KEY_LENGTH} characters`;
  const naming = 'name the key by either type and value or objectKeyType and objectKey';
  const source = `source must be a text of 1 to ${MAX_SOURCE_LENGTH} characters`;
  const count = `count must be an integer from 1 to ${MAX_SIGHTING_COUNT}`;
  const at = 'at must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z';

  const table: [string, unknown, string][] = [
    ['null', null, 'an item must be a JSON object'],
    ['an array', [DOMAIN], 'an item must be a JSON object'],
    ['a string', 'example.com', 'an item must be a JSON object'],
    ['a number', 1, 'an item must be a JSON object'],
    ['an unknown field', { ...DOMAIN, colour: 'red' }, 'unknown field "colour"'],
    ['an unknown field, its name cut to 64 characters', { ...DOMAIN, ['n'.repeat(100)]: 1 }, `unknown field ${JSON.stringify('n'.repeat(100)).slice(0, 64)}`],
    ['no key', { kind: 'sighting' }, naming],
    ['both namings', { ...DOMAIN, objectKeyType: 'DomainName', objectKey: 'example.com' }, naming],
    ['type with objectKey', { type: 'DomainName', objectKey: 'example.com' }, naming],
    ['a key type not known', { type: 'Email', value: 'a@example.com' }, types],
    ['a key type not a string', { type: 5, value: 'example.com' }, types],
    ['a value without a type', { value: 'example.com' }, types],
    ['an objectKeyType not known', { objectKeyType: 'domainname', objectKey: 'example.com' }, types],
    ['a type without a value', { type: 'DomainName' }, value],
    ['a value not a string', { type: 'DomainName', value: 42 }, value],
    ['a value too long', { type: 'URL', value: `http://example.com/${'a'.repeat(MAX_INPUT_KEY_LENGTH)}` }, value],
    ['a value with U+0000', { type: 'DomainName', value: 'exa\u0000mple.com' }, `the key value ${UNSTORABLE}`],
    ['a value with an unpaired surrogate', { type: 'DomainName', value: 'exa\ud800mple.com' }, `the key value ${UNSTORABLE}`],
    ['a value its type refuses', { type: 'MD5Hash', value: 'not-a-hash' }, 'invalid MD5Hash key "not-a-hash": expected 32 hexadecimal digits'],
    ['a kind not known', { ...DOMAIN, kind: 'sighted' }, 'kind must be sighting or falsePositive'],
    ['a source empty', { ...DOMAIN, source: '' }, source],
    ['a source too long', { ...DOMAIN, source: 'x'.repeat(MAX_SOURCE_LENGTH + 1) }, source],
    ['a source not a string', { ...DOMAIN, source: 7 }, source],
    ['a source with U+0000', { ...DOMAIN, source: 'a\u0000b' }, `source ${UNSTORABLE}`],
    ['a count of 0', { ...DOMAIN, count: 0 }, count],
    ['a negative count', { ...DOMAIN, count: -1 }, count],
    ['a count above the maximum', { ...DOMAIN, count: MAX_SIGHTING_COUNT + 1 }, count],
    ['a fractional count', { ...DOMAIN, count: 1.5 }, count],
    ['a count as text', { ...DOMAIN, count: '3' }, count],
    ['an id not a UUID', { ...DOMAIN, id: 'abc' }, 'id must be a UUID'],
    ['an id not a string', { ...DOMAIN, id: 12 }, 'id must be a UUID'],
    ['at not a string', { ...DOMAIN, at: 1_900_000_000_000 }, at],
    ['at without a zone', { ...DOMAIN, at: '2030-06-01T10:00:00' }, at],
    ['at a day the calendar has not', { ...DOMAIN, at: '2030-02-30T10:00:00Z' }, at],
    ['at null', { ...DOMAIN, at: null }, at],
    ['at more than 5 minutes ahead', { ...DOMAIN, at: iso(NOW.getTime() + 5 * 60_000 + 1) }, 'at is more than 5 minutes in the future'],
    ['at older than the retention', { ...DOMAIN, at: iso(NOW.getTime() - 30 * DAY_MS - 1) }, 'at is older than the sighting retention (30 days)'],
  ];

  it.each(table)('%s', (_, raw, invalid) => {
    expect(parseSightingItem(raw, RULES)).toEqual({ invalid });
  });

  it('checks in order: the naming, the key, kind, source, count, id, then at', () => {
    const everythingWrong = { type: 'DomainName', value: 'example.com', kind: 'x', source: '', count: 0, id: 'x', at: 'x' };
    const fixes: [string, unknown][] = [
      ['kind', 'sighting'],
      ['source', 's'],
      ['count', 1],
      ['id', ID],
      ['at', NOW.toISOString()],
    ];
    const item: Record<string, unknown> = { ...everythingWrong };
    const seen: string[] = [];
    for (const [field, fixed] of fixes) {
      const answer = parseSightingItem(item, RULES);
      expect(answer).toHaveProperty('invalid');
      seen.push((answer as { invalid: string }).invalid.split(' ')[0]);
      item[field] = fixed;
    }
    expect(seen).toEqual(['kind', 'source', 'count', 'id', 'at']);
    expect(parseSightingItem(item, RULES)).not.toHaveProperty('invalid');
  });
});
