import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { parseSourceForm, type SourceForm } from './source-form.js';

const denied = (address: string) => address.startsWith('169.254.');
const base = { name: 'feed', collection: 'c', kind: 'text', url: 'https://feed.example/list.txt' };
const fieldOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError && error.code === 'InvalidData') return error.details?.field;
    throw error;
  }
  return 'accepted';
};

describe('parseSourceForm', () => {
  it('fills the defaults of a list source (snapshot, remove, ratio 0.5, minItems 1)', () => {
    expect(parseSourceForm(base, denied)).toEqual({
      name: 'feed',
      collection: 'c',
      kind: 'text',
      enabled: true,
      intervalSeconds: 3600,
      settings: {
        url: 'https://feed.example/list.txt',
        mode: 'snapshot',
        removal: { policy: 'remove' },
        context: {},
        headerNames: [],
        maxRemovalRatio: 0.5,
        minItems: 1,
        tlp: 'TLP:CLEAR',
        reliability: 'F',
        credibility: 6,
      },
      secrets: { headers: {} },
    });
  });

  it('names the member at fault', () => {
    expect(fieldOf(() => parseSourceForm({ ...base, url: 'http://[fe80::1]/' }, () => true))).toBe('url');
    expect(fieldOf(() => parseSourceForm({ ...base, url: 'http://169.254.169.254/' }, denied))).toBe('url');
    expect(fieldOf(() => parseSourceForm({ ...base, mode: 'both' }, denied))).toBe('mode');
    expect(fieldOf(() => parseSourceForm({ ...base, removal: { policy: 'remove', runs: 2 } }, denied))).toBe('removal.runs');
    expect(fieldOf(() => parseSourceForm({ ...base, basicAuth: { username: 'a:b', password: 'x' } }, denied))).toBe('basicAuth.username');
    expect(fieldOf(() => parseSourceForm({ ...base, basicAuth: { username: 'a' } }, denied))).toBe('basicAuth.password');
    expect(fieldOf(() => parseSourceForm({ ...base, headers: { Host: 'x' } }, denied))).toBe('headers.Host');
    expect(fieldOf(() => parseSourceForm({ ...base, headers: { 'Auth-Key': 'a\r\nb' } }, denied))).toBe('headers.Auth-Key');
    expect(fieldOf(() => parseSourceForm({ ...base, kind: 'ndjson' }, denied))).toBe('valueField');
    expect(fieldOf(() => parseSourceForm({ ...base, kind: 'csv', valueColumn: 'v', delimiter: '"' }, denied))).toBe('delimiter');
    expect(fieldOf(() => parseSourceForm({ ...base, kind: 'taxii21' }, denied))).toBe('collectionID');
    expect(fieldOf(() => parseSourceForm({ ...base, kind: 'taxii21', collectionID: 'c', pageSize: 0 }, denied))).toBe('pageSize');
    expect(fieldOf(() => parseSourceForm({ ...base, kind: 'taxii21', collectionID: 'c', mode: 'snapshot' }, denied))).toBe('mode');
    expect(fieldOf(() => parseSourceForm({ ...base, kind: 'misp', toIdsOnly: 'yes' }, denied))).toBe('toIdsOnly');
    expect(fieldOf(() => parseSourceForm({ ...base, kind: 'misp', pageSize: 5 }, denied))).toBe('pageSize');
    expect(fieldOf(() => parseSourceForm({ ...base, minItems: -1 }, denied))).toBe('minItems');
    expect(fieldOf(() => parseSourceForm({ ...base, tlp: 'TLP:ORANGE' }, denied))).toBe('tlp');
    expect(fieldOf(() => parseSourceForm({ ...base, tlp: 2 }, denied))).toBe('tlp');
  });

  it('takes a TLP spelling in any case, TLP:WHITE as TLP:CLEAR, and stores its output spelling', () => {
    expect(parseSourceForm({ ...base, tlp: 'tlp:amber+strict' }, denied).settings.tlp).toBe('TLP:AMBER+STRICT');
    expect(parseSourceForm({ ...base, tlp: 'TLP:WHITE' }, denied).settings.tlp).toBe('TLP:CLEAR');
  });

  it('a PATCH keeps what it leaves out, secrets included; null clears a secret; name and collection stay', () => {
    const current: SourceForm = parseSourceForm(
      { ...base, kind: 'csv', valueColumn: 'ioc', headers: { 'Auth-Key': 'k' }, basicAuth: { username: 'u', password: 'p' } },
      denied,
    );
    const changed = parseSourceForm({ intervalSeconds: 600, basicAuth: { username: 'v' } }, denied, current);
    expect(changed).toMatchObject({
      intervalSeconds: 600,
      settings: { valueColumn: 'ioc', username: 'v', headerNames: ['Auth-Key'], tlp: 'TLP:CLEAR' },
      secrets: { headers: { 'Auth-Key': 'k' }, password: 'p' },
    });
    const cleared = parseSourceForm({ headers: null, basicAuth: null }, denied, current);
    expect(cleared.secrets).toEqual({ headers: {} });
    expect(cleared.settings.username).toBeUndefined();
    expect(fieldOf(() => parseSourceForm({ name: 'other' }, denied, current))).toBe('name');
    expect(fieldOf(() => parseSourceForm({ collection: 'other' }, denied, current))).toBe('collection');
  });
});
